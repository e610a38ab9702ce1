package domain

import (
	"encoding/hex"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain/gdt"
)

// FileID identifies a stored file.
type FileID uuid.UUID

// NewFileID returns a fresh random file id.
func NewFileID() FileID { return FileID(uuid.New()) }

// ParseFileID reads a canonical UUID.
func ParseFileID(s string) (FileID, error) {
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return FileID{}, invalid("id", "not a file id")
	}
	return FileID(id), nil
}

func (id FileID) String() string { return uuid.UUID(id).String() }

// MarshalText writes the canonical form (related_file_ids are stored as JSON).
func (id FileID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText reads the canonical form.
func (id *FileID) UnmarshalText(b []byte) error {
	u, err := uuid.ParseBytes(b)
	*id = FileID(u)
	return err
}

// Source says through which door a file came in.
type Source struct{ slug string }

var (
	SourceGDT     = Source{"gdt"}
	SourceSonoGDT = Source{"sonogdt"}
	SourceAPI     = Source{"api"}
)

// ParseSource reads a stored source slug.
func ParseSource(s string) (Source, error) {
	for _, src := range []Source{SourceGDT, SourceSonoGDT, SourceAPI} {
		if src.slug == s {
			return src, nil
		}
	}
	return Source{}, invalid("source", "unknown source")
}

func (s Source) String() string { return s.slug }

// File is the record of one stored examination result. Its bytes live in the
// blob store under StorageKey.
type File struct {
	ID          FileID
	CompanyID   CompanyID
	CustomerID  CustomerID
	Name        string
	ContentType string // sniffed from the bytes, never taken from the client
	Size        int64
	SHA256      []byte
	StorageKey  string
	Source      Source
	Category    string
	Description *string
	// GDT is the examination a GDT file describes; nil for other formats.
	GDT *gdt.Info
	// RelatedFileIDs link the files of one request that a GDT file references (6305).
	RelatedFileIDs []FileID
	// DeviceOrderID is the device order a result was matched or assigned
	// to; OrderMatch is "matched" or "unmatched" for a device's result
	// (docs/contract.md §14), nil for any other file.
	DeviceOrderID *string
	OrderMatch    *string
	// Version counts the file's changes: 1 when stored, one more when it is assigned to an order.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FileCategories are the categories a file may be filed under; "other" by default.
var FileCategories = []string{"report", "image", "lab", "letter", "other"}

// FileView is a file as the Files section answers it (docs/sections.md §11).
type FileView struct {
	ID             string    `json:"id"`
	CustomerID     int64     `json:"customer_id"`
	Name           string    `json:"name"`
	ContentType    string    `json:"content_type"`
	Size           int64     `json:"size"`
	SHA256         string    `json:"sha256"`
	Source         string    `json:"source"`
	Category       string    `json:"category"`
	Description    *string   `json:"description"`
	GDT            *gdt.Info `json:"gdt"`
	RelatedFileIDs []string  `json:"related_file_ids"`
	DeviceOrderID  *string   `json:"device_order_id"`
	OrderMatch     *string   `json:"order_match"`
	Version        int64     `json:"version"`
	CreatedAt      string    `json:"created_at"`
	UpdatedAt      string    `json:"updated_at"`
}

// View is the file's answer.
func (f File) View() FileView {
	return FileView{ID: f.ID.String(), CustomerID: int64(f.CustomerID), Name: f.Name, ContentType: f.ContentType, Size: f.Size,
		SHA256: hex.EncodeToString(f.SHA256), Source: f.Source.String(), Category: f.Category, Description: f.Description,
		GDT: f.GDT, RelatedFileIDs: related(f.RelatedFileIDs), DeviceOrderID: f.DeviceOrderID, OrderMatch: f.OrderMatch, Version: f.Version,
		CreatedAt: f.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: f.UpdatedAt.UTC().Format(time.RFC3339)}
}

func related(ids []FileID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// LinkReferencedFiles links the files of one request that a GDT file
// references by base name (case-insensitive): related_file_ids on both sides.
func LinkReferencedFiles(files []File) {
	for i := range files {
		if files[i].GDT == nil {
			continue
		}
		for _, ref := range files[i].GDT.ReferencedFiles {
			for j := range files {
				if j != i && strings.EqualFold(files[j].Name, ref) {
					files[i].RelatedFileIDs = appendOnce(files[i].RelatedFileIDs, files[j].ID)
					files[j].RelatedFileIDs = appendOnce(files[j].RelatedFileIDs, files[i].ID)
				}
			}
		}
	}
}

func appendOnce(ids []FileID, id FileID) []FileID {
	for _, e := range ids {
		if e == id {
			return ids
		}
	}
	return append(ids, id)
}

// maxFileNameBytes bounds a stored file name; longer names are cut, not refused.
const maxFileNameBytes = 255

// CleanFileName keeps the last path element of a client's file name, valid
// UTF-8 without control characters, at most 255 bytes; "upload" when nothing is left.
func CleanFileName(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	name = path.Base(name)
	name = strings.ToValidUTF8(name, "")
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	for len(name) > maxFileNameBytes {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" || name == "." || name == "/" || name == ".." {
		return "upload"
	}
	return name
}

// ExaminedSpan is when a device's GDT result says it examined, as the
// range its value spells: examined_at its second, else examined_on its day.
func ExaminedSpan(info *gdt.Info) (from, to time.Time, ok bool) {
	switch {
	case info == nil:
		return time.Time{}, time.Time{}, false
	case info.ExaminedAt != nil:
		return ValueSpan(*info.ExaminedAt)
	case info.ExaminedOn != nil:
		return ValueSpan(*info.ExaminedOn)
	}
	return time.Time{}, time.Time{}, false
}
