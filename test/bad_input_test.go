// Holds docs/contract.md §2 Upload doors (bad requests answer 400 and leave nothing).

package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

const malformedMessage = "Ungültige Anfrage: der Inhalt ist kein vollständiges multipart/form-data."

// rawPost sends a hand-made request and reads the reply.
func rawPost(t *testing.T, s *server, head string, body []byte) (*http.Response, map[string]string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]string{}
	_ = json.Unmarshal(raw, &out)
	out["raw"] = string(raw)
	return resp, out
}

func uploadHead(c company, customer int64, contentType string, length int, extra string) string {
	return fmt.Sprintf("POST /api/gdt/upload HTTP/1.1\r\nHost: praxis\r\nContent-Type: %s\r\nContent-Length: %d\r\n"+
		"x-gdt-company: %s\r\nx-gdt-customer: %d\r\nx-gdt-secret: %s\r\n%s\r\n", contentType, length, c.ID, customer, c.Secret, extra)
}

func TestBadInputAnswers400AndLeavesNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, 100*mib)
		good, contentType := multipartBody(t, filePart("a.pdf", pdfOfSize(3*mib)), filePart("b.pdf", pdfOfSize(1000)))
		boundary := strings.TrimPrefix(contentType, "multipart/form-data; boundary=")
		partHeader := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.pdf\"\r\n"
		for _, tc := range []struct {
			name, contentType string
			body              []byte
			want              string
		}{
			{"truncated in the second part", contentType, good[:len(good)-500], malformedMessage},
			{"truncated before the final boundary", contentType, good[:len(good)-len(boundary)-6], malformedMessage},
			{"missing boundary", "multipart/form-data", good, malformedMessage},
			{"wrong boundary", "multipart/form-data; boundary=nope", good, malformedMessage},
			// A body without a single boundary holds no part at all, hence no file.
			{"garbage", contentType, bytes.Repeat([]byte("garbage\r\n"), 1000), "Keine Datei gefunden."},
			{"not multipart", "application/json", []byte(`{"file":"x"}`), "Keine Datei gefunden."},
			{"no content type", "", good, "Keine Datei gefunden."},
			{"empty body", contentType, nil, "Keine Datei gefunden."},
			{"absurd part header", contentType, []byte(partHeader + "X-Junk: " + strings.Repeat("a", 11<<20) + "\r\n\r\n%PDF-1.4\r\n--" + boundary + "--\r\n"), malformedMessage},
		} {
			resp, reply := rawPost(t, s, uploadHead(c, customer, tc.contentType, len(tc.body), ""), tc.body)
			if resp.StatusCode != 400 || reply["status"] != "error" || reply["message"] != tc.want {
				t.Errorf("%s: %d %q, want 400 %q", tc.name, resp.StatusCode, reply["raw"], tc.want)
			}
		}
		if st := s.storageOf(t, c.ID); st != (storage{}) {
			t.Errorf("bad requests left %+v", st)
		}
		s.assertStillServes(t, c, customer)
	})
}

func TestAbsurdHTTPHeadersAreRefusedNot500(t *testing.T) {
	t.Parallel()
	s, c, customer := withPatient(t, backends[0], mib)
	body, contentType := multipartBody(t, filePart("a.pdf", pdfOfSize(100)))
	for _, size := range []int{20 << 10, 1 << 20} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		// The server may answer and close before the header is even sent, so
		// write in the background and read the reply here.
		go func() {
			_, _ = io.WriteString(conn, uploadHead(c, customer, contentType, len(body), "X-Junk: "+strings.Repeat("a", size)+"\r\n"))
			_, _ = conn.Write(body)
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		switch {
		case err != nil:
			// Closing on a client still sending may reset the connection
			// before the 431 arrives; what matters is no 500 and no crash.
			t.Logf("%d byte header: connection closed without a reply (%v)", size, err)
		case resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge:
			t.Errorf("%d byte header: %d, want 431", size, resp.StatusCode)
		}
		_ = conn.Close()
	}
	s.assertStillServes(t, c, customer)
}

// A client that goes away mid-file leaves no object, row or quota change.
func TestClientGoneMidFile(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, 100*mib)
		body, contentType := multipartBody(t, filePart("a.pdf", pdfOfSize(2*mib)), filePart("b.pdf", pdfOfSize(10*mib)))
		for _, sent := range []int{100, 3 * mib, len(body) - 10} {
			conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(conn, uploadHead(c, customer, contentType, len(body), ""))
			_, _ = conn.Write(body[:sent])
			time.Sleep(100 * time.Millisecond)
			_ = conn.Close()
		}
		// The server notices the closed connections; give it a moment, then look.
		deadline := time.Now().Add(5 * time.Second)
		for {
			st := s.storageOf(t, c.ID)
			if st == (storage{}) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("abandoned uploads left %+v", st)
			}
			time.Sleep(100 * time.Millisecond)
		}
		s.assertStillServes(t, c, customer)
	})
}

func TestChunkedUpload(t *testing.T) {
	t.Parallel()
	s, c, customer := withPatient(t, backends[0], 100*mib)
	body, contentType := multipartBody(t, filePart("a.pdf", pdfOfSize(5*mib)))
	// io.MultiReader hides the length, so the client sends Transfer-Encoding: chunked.
	r := s.post(t, "/api/gdt/upload", contentType, gdtHeaders(c, customer), io.MultiReader(bytes.NewReader(body)))
	if r.status != 200 || len(r.Files) != 1 || r.Files[0].Size != 5*mib {
		t.Fatalf("chunked: %d %q", r.status, r.Message)
	}
}

func TestUploadPathOtherMethods(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	resp, err := http.Get(s.url + "/api/gdt/upload")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&reply)
	if resp.StatusCode != http.StatusMethodNotAllowed || reply["status"] != "error" {
		t.Errorf("GET upload: %d %v, want 405 with the upload error shape", resp.StatusCode, reply)
	}
	resp, err = http.Get(s.url + "/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("unknown path: %d %s, want 404 problem+json", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func (s *server) assertStillServes(t *testing.T, c company, customer int64) {
	t.Helper()
	if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("ok.pdf", pdfOfSize(100))); r.status != 200 {
		t.Errorf("server no longer serves uploads: %d %q", r.status, r.Message)
	}
}

// A client that stops sending but keeps the connection open is answered once
// it has been silent for PRAXIS_UPLOAD_IDLE_TIMEOUT, and nothing is kept.
func TestStalledClientTimesOut(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0], "PRAXIS_UPLOAD_IDLE_TIMEOUT=1s")
	c := s.newCompany(t, 100*mib)
	customer := s.newCustomer(t, c)
	body, contentType := multipartBody(t, filePart("a.pdf", pdfOfSize(2*mib)), filePart("b.pdf", pdfOfSize(10*mib)))
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, uploadHead(c, customer, contentType, len(body), ""))
	_, _ = conn.Write(body[:3*mib])
	began := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled upload: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(raw), malformedMessage) || time.Since(began) > 10*time.Second {
		t.Errorf("stalled upload: %d %q after %v; want 400 %q within seconds", resp.StatusCode, raw, time.Since(began), malformedMessage)
	}
	if st := s.storageOf(t, c.ID); st != (storage{}) {
		t.Errorf("stalled upload left %+v", st)
	}
	s.assertStillServes(t, c, customer)
}
