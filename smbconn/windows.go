package smbconn

import (
	"fmt"
	"strings"
)

// Windows is what a Windows host's version means for scanning to it.
type Windows struct {
	Name string // the edition, e.g. "Windows 11 23H2 (client edition)" or AD's operatingSystem
	// Client is true for a client edition (Windows 10/11), whose Server
	// service accepts at most 20 inbound sessions.
	Client bool
	// Strict is true for a client edition from Windows 11 24H2 (build
	// 26100) on: SMB signing required and guest logons refused by default.
	Strict bool
}

// build26100 is Windows 11 24H2 (and Server 2025).
const build26100 = 26100

// JudgeWindows is the one judge of Windows editions. osName is the
// directory's operatingSystem ("Windows 11 Pro", "Windows Server 2022
// Standard"; "" when only the NTLM version is known), then the edition
// comes from the version: the builds that exist only as a client edition.
func JudgeWindows(osName string, major, minor byte, build int) Windows {
	if osName != "" {
		lower := strings.ToLower(osName)
		if !strings.HasPrefix(lower, "windows") {
			return Windows{Name: osName}
		}
		client := !strings.Contains(lower, "server")
		return Windows{Name: osName, Client: client, Strict: client && build >= build26100}
	}
	name, client := editionByBuild(major, minor, build)
	return Windows{Name: name, Client: client, Strict: client && build >= build26100}
}

// editionByBuild names a Windows build. Builds 14393, 17763 and 26100 exist as
// both client and server; only a directory lookup tells them apart.
func editionByBuild(major, minor byte, build int) (string, bool) {
	if major != 10 || minor != 0 {
		switch {
		case major == 6 && minor == 1:
			return "Windows 7 / Server 2008 R2", false
		case major == 6 && minor == 2:
			return "Windows 8 / Server 2012", false
		case major == 6 && minor == 3:
			return "Windows 8.1 / Server 2012 R2", false
		}
		return fmt.Sprintf("Windows %d.%d", major, minor), false
	}
	switch build {
	case 10240, 10586, 15063, 16299, 17134, 18362, 18363, 19041, 19042, 19043, 19044, 19045:
		return "Windows 10 (client edition)", true
	case 22000:
		return "Windows 11 21H2 (client edition)", true
	case 22621:
		return "Windows 11 22H2 (client edition)", true
	case 22631:
		return "Windows 11 23H2 (client edition)", true
	case 26200:
		return "Windows 11 25H2 (client edition)", true
	case 14393:
		return "Windows 10 1607 or Server 2016", false
	case 17763:
		return "Windows 10 1809 or Server 2019", false
	case 20348:
		return "Windows Server 2022", false
	case 26100:
		return "Windows 11 24H2 or Server 2025", false
	}
	return fmt.Sprintf("Windows 10.0 build %d", build), false
}
