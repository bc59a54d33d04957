package scanwarden

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxSecretFile is how much of a secret file is read: a password,
// community or passphrase is one short line.
const MaxSecretFile = 64 << 10

// ErrEmptySecret is a secret file whose first line is empty.
var ErrEmptySecret = errors.New("the first line is empty")

// ReadSecret reads a one-line secret from r: its first line, without the
// line end, within MaxSecretFile bytes. Errors never hold the content.
func ReadSecret(r io.Reader) (Secret, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, MaxSecretFile+1), 4096)
	line, err := br.ReadString('\n')
	switch {
	case err == io.EOF && len(line) > MaxSecretFile:
		return Secret{}, fmt.Errorf("the first line is longer than %d KiB", MaxSecretFile>>10)
	case err != nil && err != io.EOF:
		return Secret{}, err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return Secret{}, ErrEmptySecret
	}
	return NewSecret(line), nil
}

// ReadSecretFile reads a one-line secret from the file at path (see
// ReadSecret). An error opening it is the *os.PathError; other errors never
// hold the content.
func ReadSecretFile(path string) (Secret, error) {
	f, err := os.Open(path)
	if err != nil {
		return Secret{}, err
	}
	defer f.Close()
	return ReadSecret(f)
}
