package registry

import (
	"crypto/cipher"
	"crypto/des"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Kyocera address-book exports carry SMB (and FTP) login passwords as the
// hex of DES-CBC ciphertext under a fixed key and IV that every device and
// Net Viewer share, with PKCS#5 padding. It hides nothing from anyone who
// holds the file: treat an export as holding the passwords in clear.
var (
	kyoceraKey = [8]byte{0x41, 0xF4, 0xA3, 0x05, 0xF3, 0x8B, 0x46, 0x8F}
	kyoceraIV  = [8]byte{0x01, 0x82, 0x0D, 0x0B, 0x38, 0x3E, 0xCB, 0x7C}
)

// maxPasswordHex bounds an encoded password (a device field holds far less).
const maxPasswordHex = 512

// DecodePassword turns an address book's SmbLoginPasswd value into the
// password. "" is an empty password. Errors say what is wrong with the
// value, never the value.
func DecodePassword(h string) (string, error) {
	if h == "" {
		return "", nil
	}
	if len(h) > maxPasswordHex {
		return "", fmt.Errorf("encrypted password: %d hex digits, more than %d", len(h), maxPasswordHex)
	}
	ct, err := hex.DecodeString(strings.TrimSpace(h))
	if err != nil {
		return "", errors.New("encrypted password: not hex")
	}
	if len(ct) == 0 || len(ct)%des.BlockSize != 0 {
		return "", fmt.Errorf("encrypted password: %d bytes, not a whole number of 8-byte DES blocks", len(ct))
	}
	block, err := des.NewCipher(kyoceraKey[:])
	if err != nil {
		return "", err
	}
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, kyoceraIV[:]).CryptBlocks(pt, ct)
	n := int(pt[len(pt)-1])
	if n < 1 || n > des.BlockSize {
		return "", errors.New("encrypted password: bad padding (not the Kyocera key?)")
	}
	for _, b := range pt[len(pt)-n:] {
		if int(b) != n {
			return "", errors.New("encrypted password: bad padding (not the Kyocera key?)")
		}
	}
	pt = pt[:len(pt)-n]
	if utf8.Valid(pt) {
		return string(pt), nil
	}
	// Not UTF-8: read it as Latin-1, one rune per byte.
	r := make([]rune, len(pt))
	for i, b := range pt {
		r[i] = rune(b)
	}
	return string(r), nil
}

// EncodePassword is the inverse of DecodePassword, for exports: upper-case
// hex of DES-CBC(PKCS#5(password)). "" stays "".
func EncodePassword(pw string) string {
	if pw == "" {
		return ""
	}
	block, err := des.NewCipher(kyoceraKey[:])
	if err != nil {
		panic("registry: des: " + err.Error())
	}
	n := des.BlockSize - len(pw)%des.BlockSize
	pt := make([]byte, len(pw)+n)
	copy(pt, pw)
	for i := len(pw); i < len(pt); i++ {
		pt[i] = byte(n)
	}
	cipher.NewCBCEncrypter(block, kyoceraIV[:]).CryptBlocks(pt, pt)
	return strings.ToUpper(hex.EncodeToString(pt))
}
