// Package seal keeps secrets encrypted at rest: AES-256-GCM (standard
// library) under one key kept in a key file of its own, created on first use
// with mode 0600. The key never goes into the database; the database keeps
// only the key's id, so a data dir opened with a missing or different key is
// refused instead of silently re-keyed (see store.Store.UnlockKey).
//
// Key file: 64 hex digits and a newline (32 random bytes). A file of exactly
// 32 raw bytes is read too, for keys handed over as systemd credentials.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FileName is the key file's name next to the database and in
// $CREDENTIALS_DIRECTORY.
const FileName = "secret.key"

// EnvKeyFile names the key file in the environment (as --key-file does).
const EnvKeyFile = "SCANWARDEN_KEY_FILE"

const (
	keySize   = 32
	version   = 1
	nonceSize = 12
	maxFile   = 4096
)

// Key is an AES-256-GCM sealing key.
type Key struct {
	raw  []byte
	aead cipher.AEAD
	path string
}

// ErrNoKey is returned (wrapped) by Load when the key file does not exist.
var ErrNoKey = errors.New("no key file")

// Resolve picks the key file: flagValue (--key-file), else
// $SCANWARDEN_KEY_FILE, else $CREDENTIALS_DIRECTORY/secret.key when that file
// exists (systemd LoadCredential=), else secret.key in dataDir, next to the
// database.
func Resolve(flagValue string, getenv func(string) string, dataDir string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := getenv(EnvKeyFile); v != "" {
		return v
	}
	if d := getenv("CREDENTIALS_DIRECTORY"); d != "" {
		p := filepath.Join(d, FileName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join(dataDir, FileName)
}

// Load reads an existing key file. A missing file is ErrNoKey; a file that
// others may read is refused.
func Load(path string) (*Key, error) {
	// without waiting: a FIFO put in its place (a data dir's key, which
	// the daemon's user could reach) must not block a root command
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("key file %s: %w", path, ErrNoKey)
	}
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("key file %s: not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s: mode %04o lets others read it; chmod 600 it", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	raw, err := decodeKey(b)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	k, err := newKey(raw)
	if err != nil {
		return nil, err
	}
	k.path = path
	return k, nil
}

func decodeKey(b []byte) ([]byte, error) {
	if len(b) == keySize {
		return append([]byte(nil), b...), nil
	}
	s := strings.TrimSpace(string(b))
	if len(s) != 2*keySize {
		return nil, fmt.Errorf("not a key: want %d hex digits", 2*keySize)
	}
	raw, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("not a key: not hex")
	}
	return raw, nil
}

// Create makes a new random key and writes it to path with mode 0600. It
// never replaces an existing file.
func Create(path string) (*Key, error) {
	raw := make([]byte, keySize)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("new key: %w", err)
	}
	k, err := newKey(raw)
	if err != nil {
		return nil, err
	}
	if err := k.WriteFile(path); err != nil {
		return nil, err
	}
	return k, nil
}

// New makes a random key that is not yet written anywhere (rotation writes
// it with WriteFile before using it).
func New() (*Key, error) {
	raw := make([]byte, keySize)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("new key: %w", err)
	}
	return newKey(raw)
}

// WriteFile writes the key to path (mode 0600, synced), refusing to replace
// an existing file (os.ErrExist). The file appears whole or not at all (a
// temporary file linked into place), so a process racing to make the same
// key file never reads half of one. The directory is created (0700) when
// missing.
func (k *Key) WriteFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	f, err := os.CreateTemp(dir, ".secret-key-*")
	if err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.WriteString(hex.EncodeToString(k.raw) + "\n")
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	k.path = path
	return nil
}

func newKey(raw []byte) (*Key, error) {
	if len(raw) != keySize {
		return nil, fmt.Errorf("key: want %d bytes", keySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	return &Key{raw: raw, aead: aead}, nil
}

// Path is the file the key was read from or written to ("" for a key from New).
func (k *Key) Path() string { return k.path }

// ID names the key without revealing it (16 hex digits); the store keeps it
// to recognise the key its secrets were sealed with.
func (k *Key) ID() string { return hex.EncodeToString(k.Derive("scanwarden key id")[:8]) }

// Derive returns a 32-byte sub-key for one purpose (HKDF-SHA256 with label as
// info), e.g. the failed-logon ledger's HMAC key. Different labels give
// independent keys; the sealing key itself is never handed out.
func (k *Key) Derive(label string) []byte {
	out, err := hkdf.Key(sha256.New, k.raw, nil, label, 32)
	if err != nil {
		panic("seal: hkdf: " + err.Error()) // only for lengths beyond 255*32
	}
	return out
}

// String keeps the key out of prints and logs.
func (k *Key) String() string { return "seal.Key(" + k.ID() + ")" }

// Seal encrypts plaintext; label binds the ciphertext to its use (e.g.
// "destination.password"), so a sealed value cannot be moved to another
// column. The result is: version byte, 12-byte random nonce, ciphertext+tag.
func (k *Key) Seal(plaintext []byte, label string) []byte {
	out := make([]byte, 1+nonceSize, 1+nonceSize+len(plaintext)+k.aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1 : 1+nonceSize]); err != nil {
		panic("seal: random nonce: " + err.Error()) // crypto/rand does not fail
	}
	return k.aead.Seal(out, out[1:1+nonceSize], plaintext, []byte(label))
}

// ErrOpen is returned when a sealed value does not open under this key and
// label: another key, another label, or damage.
var ErrOpen = errors.New("sealed value does not open with this key")

// Open decrypts what Seal made with the same key and label.
func (k *Key) Open(sealed []byte, label string) ([]byte, error) {
	if len(sealed) < 1+nonceSize+k.aead.Overhead() || sealed[0] != version {
		return nil, ErrOpen
	}
	pt, err := k.aead.Open(nil, sealed[1:1+nonceSize], sealed[1+nonceSize:], []byte(label))
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}
