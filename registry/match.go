package registry

import (
	"net"
	"slices"
	"strings"
)

// Match returns the destinations a device's send-failure text names, among
// ds (give a device's own destinations first, then all). The text may be
// \\host\share\path, //host/share/path, smb://host/share/path, or a host
// and a path apart ("fs01 \scans\alice", "fs01:\scans\alice" as job logs
// and mails show them). Host, share and path compare case-insensitively
// with \ or / as separator; a bare host name matches its full name (fs01 ~
// fs01.example.com). Exact matches win; else the destinations on the same
// host and share whose folder is the longest prefix of the named path (a
// scan into a sub-folder). Nothing when the text names no host and share.
func Match(text string, ds []Destination) []Destination {
	host, share, path, ok := splitUNC(text)
	if !ok {
		return nil
	}
	var exact, best []Destination
	bestLen := -1
	for _, d := range ds {
		dpath := pathParts(d.Path)
		if !sameHost(host, strings.ToLower(d.Host)) || share != strings.ToLower(d.Share) {
			continue
		}
		if len(dpath) > len(path) || !slices.Equal(dpath, path[:len(dpath)]) {
			continue
		}
		switch {
		case len(dpath) == len(path):
			exact = append(exact, d)
		case len(dpath) > bestLen:
			best, bestLen = []Destination{d}, len(dpath)
		case len(dpath) == bestLen:
			best = append(best, d)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return best
}

// splitUNC reads the destination text into lower-case host, share and path
// components.
func splitUNC(s string) (host, share string, path []string, ok bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(strings.ToLower(s), "smb://") {
		s = "//" + s[len("smb://"):]
	}
	s = strings.ReplaceAll(s, `\`, "/")
	switch {
	case strings.HasPrefix(s, "//"):
		s = s[2:]
	default:
		// A host and a path apart: "host /share/path", "host:/share/path".
		h, rest, found := strings.Cut(s, " ")
		if !found {
			if i := strings.Index(s, ":/"); i > 0 {
				h, rest, found = s[:i], s[i+1:], true
			}
		}
		if !found || h == "" || !strings.HasPrefix(strings.TrimSpace(rest), "/") {
			return "", "", nil, false
		}
		s = h + "/" + strings.TrimSpace(rest)
	}
	parts := pathParts(strings.ToLower(s))
	if len(parts) < 2 {
		return "", "", nil, false
	}
	host = parts[0]
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.Trim(host, "[]"), parts[1], parts[2:], true
}

func pathParts(p string) []string {
	return strings.FieldsFunc(strings.ToLower(p), func(r rune) bool { return r == '/' || r == '\\' })
}

// sameHost: equal, or the same first label when exactly one side is a bare
// name (the MFP may store fs01 where the text says fs01.example.com).
func sameHost(a, b string) bool {
	if a == b {
		return true
	}
	if strings.Contains(a, ".") == strings.Contains(b, ".") || net.ParseIP(a) != nil || net.ParseIP(b) != nil {
		return false
	}
	la, _, _ := strings.Cut(a, ".")
	lb, _, _ := strings.Cut(b, ".")
	return la == lb
}
