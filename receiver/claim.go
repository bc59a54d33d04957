package receiver

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden/internal/proc"
)

// newClaim is this process's claim: its pid and a random tag, so a row left
// Delivering by a dead process can be told from one in flight.
func newClaim() string {
	var r [6]byte
	rand.Read(r[:])
	return strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(r[:])
}

// claimAlive says whether the process that made claim may still run.
func claimAlive(claim, own string) bool {
	if claim == own {
		return true
	}
	pidS, _, _ := strings.Cut(claim, ":")
	pid, err := strconv.Atoi(pidS)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false // our pid, another claim: an earlier life of this process id
	}
	_, err = os.Stat("/proc/" + pidS)
	return err == nil && !proc.Zombie(pid)
}
