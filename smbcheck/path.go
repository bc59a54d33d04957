package smbcheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbconn"
)

// pathStep walks the folder path.
type pathStep struct{ *checker }

func (pathStep) ids() []string { return []string{StepPath} }

func (c pathStep) run(ctx context.Context) bool { return c.stepPath(ctx, c.share) }

// stepPath walks the folder path and reports the first missing component.
func (c pathStep) stepPath(ctx context.Context, sh *smbconn.Share) bool {
	s := c.begin(StepPath)
	parts := c.t.Folders()
	if len(parts) == 0 {
		c.ok(s, "the share root is the destination")
		return true
	}
	pctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	for i := range parts {
		p := strings.Join(parts[:i+1], `\`)
		fi, err := sh.Stat(pctx, p)
		if err == nil && !fi.IsDir() {
			s.Evidence["not_a_folder"] = p
			c.fail(s, scanwarden.CausePathNotFound, fmt.Sprintf("%s\\%s is a file, not a folder", c.t.Share, p),
				fmt.Sprintf("Correct the destination's Path on the MFP: %s\\%s is a file.", c.t.Share, p))
			return false
		}
		if err == nil {
			continue
		}
		cause, ev := classify(StepPath, err)
		for k, v := range ev {
			s.Evidence[k] = v
		}
		parent := c.t.Share
		if i > 0 {
			parent += `\` + strings.Join(parts[:i], `\`)
		}
		switch cause {
		case scanwarden.CausePathNotFound:
			s.Evidence["missing"] = parts[i]
			s.Evidence["exists_up_to"] = parent
			c.fail(s, cause, fmt.Sprintf("folder %s does not exist in %s (the first missing part of %s)", parts[i], parent, c.t.PanelPath()),
				fmt.Sprintf("Create the folder %s\\%s on the server, or correct the destination's Path on the MFP.", parent, parts[i]))
		case scanwarden.CauseDFSLink:
			c.failDFSLink(ctx, s, parts, i)
		case scanwarden.CauseNoWritePermission:
			// A folder the account may not enter refuses its children:
			// blame the parent when it cannot be listed either.
			blocked := parent + `\` + parts[i]
			// (Not over SMB1: the path step does not list there.)
			if i > 0 && !sh.SMB1() {
				if _, lerr := sh.ReadDir(pctx, strings.Join(parts[:i], `\`)); lerr != nil {
					if lc, _ := classify(StepPath, lerr); lc == scanwarden.CauseNoWritePermission {
						blocked = parent
					}
				}
			}
			s.Evidence["refused"] = blocked
			c.fail(s, cause, fmt.Sprintf("%s may not open folder %s", c.who(), blocked),
				fmt.Sprintf("Give %s at least 'List folder / traverse' on %s and Modify on the scan folder %s.", c.grantee(), blocked, c.t.PanelPath()))
		default:
			c.fail(s, cause, fmt.Sprintf("cannot open %s\\%s: %v", parent, parts[i], err), "")
		}
		return false
	}
	c.ok(s, fmt.Sprintf("folder %s exists", c.t.PanelPath()))
	return true
}
