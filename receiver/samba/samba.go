// Package samba manages scanwarden's own smbd, the fallback share's server:
// it renders smb.conf from data (Config), starts, finds, reloads and stops
// smbd (Server), reads what smbd logs (Audit: who wrote a file and when
// their session ended; the logons, as Observations), probes the share as an
// MFP does (ProbeShare), and keeps the share's allowlist (AllowFor).
//
// The installed layout splits the fallback share across a privilege
// boundary. The daemon (user scanwarden) hands root one piece of DATA: the
// share's allowlist, one address or network a line, in AllowFile under its
// receiver dir. Root (PrepareShare, run by scanwarden-smbd.service before
// smbd starts and at every reload) renders smb.conf itself from the
// root-owned config and that list, validated entry by entry, into a folder
// of its own; it runs testparm and smbpasswd only there. Root never follows
// a symlink the daemon could plant: the list is opened one path component
// at a time without following links, and each component must belong to
// root or the daemon.
package samba
