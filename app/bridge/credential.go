package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Credential is a device's OAuth client (docs/contract.md §14): it gets
// tokens with the client-credentials grant and keeps one until shortly
// before it runs out, or until the service refuses it.
type Credential struct {
	URL, ClientID, ClientSecret string
	client                      *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time
}

// NewCredential is the device client's token source against the praxis at url.
func NewCredential(url, clientID, clientSecret string) *Credential {
	return &Credential{URL: strings.TrimRight(url, "/"), ClientID: clientID, ClientSecret: clientSecret,
		client: &http.Client{Timeout: 30 * time.Second}}
}

// Token is a live access token, fetched when none is kept.
func (c *Credential) Token(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && time.Now().Before(c.expires) {
		return c.token, nil
	}
	body := url.Values{"grant_type": {"client_credentials"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/api/oauth/v2/token", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
	resp, err := c.client.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var answer struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || answer.AccessToken == "" {
		return "", &tokenRefused{status: resp.StatusCode, code: answer.Error}
	}
	c.token = answer.AccessToken
	// Renewed a minute early, so that no request carries a token that runs
	// out on its way.
	c.expires = time.Now().Add(time.Duration(max(answer.ExpiresIn-60, 1)) * time.Second)
	return c.token, nil
}

// Expire drops the token kept: the service refused it.
func (c *Credential) Expire() {
	c.mu.Lock()
	c.token = ""
	c.mu.Unlock()
}

// tokenRefused is a token request the service answered with an error: a
// revoked or rotated-away credential, or a server that is not ready.
type tokenRefused struct {
	status int
	code   string
}

func (e *tokenRefused) Error() string {
	return fmt.Sprintf("token request refused: %d %s", e.status, e.code)
}
