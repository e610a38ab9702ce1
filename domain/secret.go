package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// secretBytes of randomness: 256 bits, beyond any guessing.
const secretBytes = 32

// Secret is a generated credential (upload secret, client secret). It is shown
// once and stored only as its SHA-256 hash: for a uniformly random 256-bit value
// a slow password hash adds nothing, since there is no dictionary to slow down.
type Secret string

// NewSecret returns 256 random bits, base64url without padding (43 characters).
func NewSecret() (Secret, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return Secret(base64.RawURLEncoding.EncodeToString(b)), nil
}

// Hash is what gets stored.
func (s Secret) Hash() []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// Matches compares the secret's hash with a stored hash in constant time.
func (s Secret) Matches(storedHash []byte) bool {
	if len(storedHash) != sha256.Size {
		return false
	}
	return subtle.ConstantTimeCompare(s.Hash(), storedHash) == 1
}
