package demo

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hoard/hoard/messenger/emulator"
)

// ChatHint tells a newcomer how to try the bot: link in Settings, then
// talk to it as a seeded user with `hoard chat`.
func ChatHint(dataDir string, info emulator.Info) string {
	if info.BotUsername == "" || len(info.Users) == 0 {
		return ""
	}
	env := ""
	if def, err := filepath.Abs("./data"); err != nil || def != dataDir {
		env = "DATA_DIR=" + dataDir + " "
	}
	return fmt.Sprintf("Try the chat bot @%s: in Settings press \"Get a link code\", then in another terminal run\n"+
		"  %shoard chat --as %s\nand send it /link CODE (then /help). Other users: %s.\n", info.BotUsername, env, info.Users[0].Username,
		strings.Join(userNames(info.Users[1:]), ", "))
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
