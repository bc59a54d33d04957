package web

import (
	"net/url"
	"strings"
	"unicode"
)

// safeNext keeps a post-login redirect on this site: next must be a clean
// absolute path (with an optional query) that every browser resolves to
// this origin. It is parsed, not pattern-matched: no scheme, no host, no
// user info, no fragment, and neither the raw text nor its decoded path may start with
// "//", hold a backslash, a control character or white space (browsers
// drop tabs and newlines and turn "\" into "/", so "/\t/evil.example" and
// "/\evil.example" lead off-site). Only a plain space may appear decoded.
// Anything else is "/".
func safeNext(next string) string {
	if next == "" || next[0] != '/' || len(next) > 2048 || !cleanURLText(next, false) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || u.Fragment != "" {
		return "/"
	}
	path, err := url.PathUnescape(u.EscapedPath())
	if err != nil || !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || !cleanURLText(path, true) {
		return "/"
	}
	return u.RequestURI()
}

// cleanURLText: no leading "//", no backslash, no control character, no
// invalid UTF-8, and no white space but, in a decoded path, the plain
// space (a name may hold one; browsers drop none inside a path).
func cleanURLText(s string, decoded bool) bool {
	if strings.HasPrefix(s, "//") || strings.ContainsRune(s, '\\') {
		return false
	}
	for _, r := range s {
		if r == ' ' && decoded {
			continue
		}
		if r == unicode.ReplacementChar || unicode.IsControl(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}
