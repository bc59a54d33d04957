package snmp

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"time"
)

// Bounds on a device e-mail.
const (
	maxMailBytes = 1 << 20
	maxMailParts = 16
	maxMailLines = 2000
)

// ParsedMail is what a device's job-log or send-result e-mail says.
type ParsedMail struct {
	MessageID string
	From      string // address only, lower case
	Subject   string
	Date      time.Time
	Serial    string   // a serial number quoted in the body, if any
	Lines     []string // cleaned text lines of the text parts
}

var (
	serialLine = regexp.MustCompile(`(?i)\bserial(?:\s*(?:no\.?|number))?\s*[:=]\s*([A-Za-z0-9-]{4,32})`)
)

// ParseMail reads one RFC 5322 message: headers, then text/plain parts
// (multipart, base64 and quoted-printable handled, HTML parts ignored).
// Errors name the header or part that was wrong.
func ParseMail(r io.Reader) (ParsedMail, error) {
	msg, err := mail.ReadMessage(bufio.NewReader(io.LimitReader(r, maxMailBytes)))
	if err != nil {
		return ParsedMail{}, fmt.Errorf("mail: headers: %w", err)
	}
	var pm ParsedMail
	dec := new(mime.WordDecoder)
	if from := msg.Header.Get("From"); from != "" {
		a, err := mail.ParseAddress(from)
		if err != nil {
			return ParsedMail{}, fmt.Errorf("mail: From header: %w", err)
		}
		pm.From = strings.ToLower(a.Address)
	}
	pm.MessageID = cleanString(msg.Header.Get("Message-Id"))
	if s, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
		pm.Subject = cleanString(s)
	} else {
		pm.Subject = cleanString(msg.Header.Get("Subject"))
	}
	if d, err := msg.Header.Date(); err == nil {
		pm.Date = d
	}
	var texts [][]byte
	if err := collectText(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, &texts, 0); err != nil {
		return ParsedMail{}, err
	}
	for _, t := range texts {
		sc := bufio.NewScanner(bytes.NewReader(t))
		sc.Buffer(make([]byte, 0, 4096), 64*1024)
		for sc.Scan() && len(pm.Lines) < maxMailLines {
			line := CleanText(sc.Bytes())
			if line == "" {
				continue
			}
			pm.Lines = append(pm.Lines, line)
			if pm.Serial == "" {
				if m := serialLine.FindStringSubmatch(line); m != nil {
					pm.Serial = m[1]
				}
			}
		}
		if err := sc.Err(); err != nil {
			return ParsedMail{}, fmt.Errorf("mail: body: %w", err)
		}
	}
	if pm.Subject != "" && len(pm.Lines) < maxMailLines {
		pm.Lines = append([]string{pm.Subject}, pm.Lines...)
	}
	return pm, nil
}

func collectText(ctype, cte string, body io.Reader, out *[][]byte, depth int) error {
	if depth > 3 {
		return errors.New("mail: multipart nested deeper than 3")
	}
	media := "text/plain"
	var params map[string]string
	if ctype != "" {
		var err error
		media, params, err = mime.ParseMediaType(ctype)
		if err != nil {
			return fmt.Errorf("mail: Content-Type %q: %w", cleanString(ctype), err)
		}
	}
	switch {
	case strings.HasPrefix(media, "multipart/"):
		boundary := params["boundary"]
		if boundary == "" {
			return errors.New("mail: multipart without boundary")
		}
		mr := multipart.NewReader(body, boundary)
		for i := 0; ; i++ {
			if i >= maxMailParts {
				return fmt.Errorf("mail: more than %d parts", maxMailParts)
			}
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("mail: part %d: %w", i+1, err)
			}
			err = collectText(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, out, depth+1)
			p.Close()
			if err != nil {
				return fmt.Errorf("mail: part %d: %w", i+1, err)
			}
		}
	case media == "text/plain":
		var r io.Reader = body
		switch strings.ToLower(strings.TrimSpace(cte)) {
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, body) // it ignores CR and LF itself
		case "quoted-printable":
			r = quotedprintable.NewReader(body)
		}
		b, err := io.ReadAll(io.LimitReader(r, maxMailBytes))
		if err != nil {
			return fmt.Errorf("mail: text part (%s): %w", cleanString(cte), err)
		}
		*out = append(*out, b)
		return nil
	default:
		_, err := io.Copy(io.Discard, io.LimitReader(body, maxMailBytes))
		return err
	}
}

// MailEvents finds send failures in a parsed e-mail: every line a rule
// matches gives one event (one per code). The destination is the line's
// UNC path, else the first one in the message.
func MailEvents(pm ParsedMail, device string, rules *Rules, now time.Time) []Event {
	msgDest := ""
	for _, l := range pm.Lines {
		if d := findDestination(l); d != "" {
			msgDest = d
			break
		}
	}
	id := pm.MessageID
	if id == "" {
		id = pm.From + "|" + pm.Date.UTC().Format(time.RFC3339) + "|" + pm.Subject
	}
	evs := newReportEvents(device, rules, now)
	for _, l := range pm.Lines {
		ev, ok := evs.match(Observation{Source: SourceMail, Text: l})
		if !ok {
			continue
		}
		if ev.Destination == "" {
			ev.Destination = msgDest
		}
		ev.Key = eventKey(device, SourceMail, id, ev.Code)
		ev.Detail = map[string]string{"from": pm.From, "subject": pm.Subject, "message_id": pm.MessageID}
		evs.add(ev)
	}
	return evs.out
}
