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

import "embed"

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
	ConfigFile = "/etc/scanwarden/scanwarden.toml"
	KeyFile    = "/etc/scanwarden/secret.key"
	StateDir   = "/var/lib/scanwarden"
	LogsDir    = "/var/log/scanwarden"
	// ReceiverDir is the receiver's data dir (inbox/, held/, and the
	// allowlist it hands root): the daemon gives the receiver
	// data_dir/receiver.
	ReceiverDir = "/var/lib/scanwarden/receiver"
	// AllowFile is the one file root reads from the daemon: data only.
	AllowFile = ReceiverDir + "/smbd-allow"
	// SmbdDir is root's own folder for smbd (the unit's StateDirectory=,
	// [receiver] smbd_dir): smb.conf, passdb, tdbs, logs.
	SmbdDir = "/var/lib/scanwarden-smbd"
	SMBConf = SmbdDir + "/smb.conf"
	UnitDir = "/usr/lib/systemd/system"
	Binary  = "/usr/bin/scanwarden"
)
