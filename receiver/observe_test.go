package receiver

import (
	"testing"
	"time"
)

func TestFileObservation(t *testing.T) {
	for _, c := range []struct {
		writer, file, want string
	}{
		{"mfp|10.0.0.5|mfp01|SMB2_10", "doc001.pdf", "pdf"}, {"mfp|10.0.0.5|mfp01|SMB2_10", "a.TIF", "tiff"},
		{"mfp|10.0.0.5|mfp01|NT1", "a.jpg", "jpeg"}, {"mfp|10.0.0.5|mfp01|NT1", "a.oxps", "oxps"}, {"mfp|10.0.0.5|x|y", "a.xps", "xps"},
		{"mfp|10.0.0.5|mfp01|SMB2_10", "a.docx", ""}, {"", "a.pdf", ""}, {"mfp|nope|x|y", "a.pdf", ""},
	} {
		o, ok := fileObservation(c.writer, c.file, time.Now())
		if ok != (c.want != "") || o.FileType != c.want {
			t.Errorf("%s %s: %+v %v, want %q", c.writer, c.file, o, ok, c.want)
		}
	}
}
