package demo

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hoard/hoard/messenger/emulator"
)

// ChatHint tells a newcomer how to try the bot: link in Settings, then
// talk to it as a seeded user with `hoard chat`, run as hoard (the command
// that starts this program, as a newcomer can type it: see Command).
func ChatHint(dataDir, hoard string, info emulator.Info) string {
	if info.BotUsername == "" || len(info.Users) == 0 {
		return ""
	}
	env := ""
	if def, err := filepath.Abs("./data"); err != nil || def != dataDir {
		env = "DATA_DIR=" + dataDir + " "
	}
	return fmt.Sprintf("Try the chat bot @%s: in Settings press \"Get a link code\", then in another terminal run\n"+
		"  %s%s chat --as %s\nand send it /link CODE (then /help). Other users: %s.\n", info.BotUsername, env, hoard, info.Users[0].Username,
		strings.Join(userNames(info.Users[1:]), ", "))
}

// Command is how a newcomer in directory cwd runs the program at exe
// (os.Executable): its path relative to cwd when it lies inside (make
// demo runs bin/hoard), "hoard" when it is on PATH under that name, and
// `go run ./cmd/hoard` for a binary go run built in a temporary
// directory, which is gone once it stops.
func Command(exe, cwd, onPath string) string {
	if onPath != "" && onPath == exe {
		return filepath.Base(exe)
	}
	if rel, err := filepath.Rel(cwd, exe); err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
		if !strings.Contains(rel, string(filepath.Separator)) {
			rel = "." + string(filepath.Separator) + rel
		}
		return rel
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/hoard"
	}
	return exe
}

func userNames(us []emulator.InfoUser) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Username
	}
	return out
}

// AccountsNote is what the messaging page tells about the demo's emulator: the
// phone numbers another account may sign in with, and the login code.
func AccountsNote(info emulator.Info) string {
	var phones []string
	for _, u := range info.Users {
		phones = append(phones, u.Phone)
	}
	if len(phones) == 0 {
		return fmt.Sprintf("Demo: the emulator knows only the account set up already (%s); its login code is %s.", info.Phone, info.Code)
	}
	return fmt.Sprintf("Demo: add another account with one of the emulator's phone numbers (%s); every login code is %s.",
		strings.Join(phones, ", "), info.Code)
}
