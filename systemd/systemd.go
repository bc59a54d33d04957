// Package systemd holds scanwarden's systemd units and its sysusers.d and
// tmpfiles.d snippets, as the Debian package installs them, and the names
// and paths they fix for an installed box. The files themselves live beside
// this one; Files embeds them for tools that need their text.
//
//	scanwarden.service              the daemon (Type=notify, watchdog, user scanwarden)
//	scanwarden-smbd.service         the fallback share's smbd; root renders its smb.conf
//	scanwarden-smbd-reload.path     reloads that smbd when the daemon's allowlist changes
//	scanwarden-smbd-reload.service  what the path unit runs
//	sysusers.d/scanwarden.conf      the system user
//	tmpfiles.d/scanwarden.conf      the folders, owners and modes
package systemd

import (
	"embed"
	"github.com/scanwarden/scanwarden/installed"
)

// Files are the units and snippets, by their names in this folder.
//
//go:embed *.service *.path sysusers.d/*.conf tmpfiles.d/*.conf
var Files embed.FS

// Units names the unit files, in the order they are installed.
func Units() []string {
	return []string{
		"scanwarden.service",
		"scanwarden-smbd.service",
		"scanwarden-smbd-reload.path",
		"scanwarden-smbd-reload.service",
	}
}

// Paths of an installed box (the Debian package).
const (
	Service    = "scanwarden.service"
	SMBService = "scanwarden-smbd.service"
	User       = "scanwarden"
	// The paths, from package installed.
	ConfigFile  = installed.ConfigFile
	KeyFile     = installed.KeyFile
	StateDir    = installed.DataDir
	LogsDir     = installed.LogsDir
	ReceiverDir = installed.ReceiverDir
	AllowFile   = installed.AllowFile
	SmbdDir     = installed.SmbdDir
	SMBConf     = installed.SMBConf
	UnitDir     = installed.UnitDir
	Binary      = installed.Binary
)
