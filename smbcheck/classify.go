package smbcheck

import (
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
)

// classify turns any error a step met into a cause and its evidence
// (smbclient.Classify, at the operation the step stands for).
func classify(step string, err error) (scanwarden.Cause, Evidence) {
	cause, ev := smbclient.Classify(stepOp[step], err)
	return cause, ev
}

// stepOp is the operation (smbclient.Error's Op) whose statuses a step
// shares, where an NT status or an error means something of its own there.
var stepOp = map[string]string{
	StepTCP: "connect", StepSession: "logon", StepForms: "logon", StepTree: "tree connect", stepDelete: "remove",
}

// stepDelete is the canary's delete within the write step, judged apart.
const stepDelete = "delete"
