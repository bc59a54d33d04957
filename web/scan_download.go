package web

import (
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// scanDownload sends a held scan's bytes. The file name is the MFP's, so it
// is cleaned before it goes into a header, and the content is always sent
// as a download, never shown inline.
func (s *receiverPages) scanDownload(w http.ResponseWriter, r *http.Request, a actor) {
	id, ok := s.scanID(w, r)
	if !ok {
		return
	}
	sc, err := s.receiver.Scan(r.Context(), id)
	if err != nil {
		s.fail(w, r, "scan", err)
		return
	}
	f, err := s.receiver.Open(r.Context(), id)
	if err != nil {
		s.fail(w, r, "scan file", err)
		return
	}
	defer f.Close()
	s.audit(r.Context(), a, r, "scan.download", strconv.FormatInt(id, 10), sc.Name)
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	cd := mime.FormatMediaType("attachment", map[string]string{"filename": downloadName(sc.Name)})
	if cd == "" {
		cd = "attachment" // a name the header cannot carry: the browser picks one
	}
	h.Set("Content-Disposition", cd)
	if sc.Size > 0 {
		h.Set("Content-Length", strconv.FormatInt(sc.Size, 10))
	}
	if _, err := io.Copy(w, f); err != nil {
		s.log.Error("download scan", "id", id, "err", err)
	}
}

// downloadName keeps the base name's printable characters.
func downloadName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		return "scan"
	}
	return name
}
