// Package installed names the paths of an installed box (the Debian
// package): the one place they are written. It imports nothing, so that
// every package (store, daemon, doctor, systemd, the CLI, the packager) can
// use it.
package installed

const (
	// ConfigFile is the daemon's configuration (root-owned).
	ConfigFile = "/etc/scanwarden/scanwarden.toml"
	// KeyFile is the key that seals the stored secrets.
	KeyFile = "/etc/scanwarden/secret.key"
	// DataDir is the daemon's data dir (the unit's StateDirectory=).
	DataDir = "/var/lib/scanwarden"
	// LogsDir is the daemon's log folder (the unit's LogsDirectory=).
	LogsDir = "/var/log/scanwarden"
	// ReceiverDir is the receiver's data dir (inbox/, held/, and the
	// allowlist it hands root): the daemon gives the receiver
	// data_dir/receiver.
	ReceiverDir = DataDir + "/receiver"
	// AllowFile is the one file root reads from the daemon: data only.
	AllowFile = ReceiverDir + "/smbd-allow"
	// SmbdDir is root's own folder for smbd (the smbd unit's
	// StateDirectory=, [receiver] smbd_dir): smb.conf, passdb, tdbs, logs.
	SmbdDir = "/var/lib/scanwarden-smbd"
	// SMBConf is the smb.conf root renders there.
	SMBConf = SmbdDir + "/smb.conf"
	// UnitDir is where the package puts the systemd units.
	UnitDir = "/usr/lib/systemd/system"
	// Binary is the installed program.
	Binary = "/usr/bin/scanwarden"
)
