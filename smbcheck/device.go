package smbcheck

import "github.com/scanwarden/scanwarden/smbconn"

// What the MFP's SMB client can do lives with the connection that replays
// it (smbconn); these names keep it part of a check's vocabulary.
type (
	Device   = smbconn.Device
	Dialect  = smbconn.Dialect
	FileType = smbconn.FileType
)

// The dialects and file types (see smbconn).
const (
	DialectSMB1     = smbconn.DialectSMB1
	DialectSMB202   = smbconn.DialectSMB202
	DialectSMB21    = smbconn.DialectSMB21
	DialectSMB30    = smbconn.DialectSMB30
	DialectSMB302   = smbconn.DialectSMB302
	DialectSMB311   = smbconn.DialectSMB311
	FileTypePDF     = smbconn.FileTypePDF
	FileTypeTIFF    = smbconn.FileTypeTIFF
	FileTypeJPEG    = smbconn.FileTypeJPEG
	FileTypeXPS     = smbconn.FileTypeXPS
	FileTypeOXPS    = smbconn.FileTypeOXPS
	DefaultFileType = smbconn.DefaultFileType
)

// ParseDialect is smbconn.ParseDialect.
func ParseDialect(s string) (Dialect, error) { return smbconn.ParseDialect(s) }

// ParseFileType is smbconn.ParseFileType.
func ParseFileType(s string) (FileType, error) { return smbconn.ParseFileType(s) }
