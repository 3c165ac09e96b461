package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hoard/hoard"
	"golang.org/x/crypto/argon2"
)

// argon2id parameters: the OWASP minimum (19 MiB, 2 passes), about 25 ms on
// the project's 2-core machine. Hashes record their parameters, so these can
// grow without invalidating stored passwords.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// Password limits.
const (
	minPasswordLen = 10
	maxPasswordLen = 256
)

// hashSlots bounds concurrent password hashes: each takes argonMemory, and a
// burst of sign-ins must not exhaust memory.
var hashSlots = make(chan struct{}, 2)

func acquireHashSlot(ctx context.Context) error {
	select {
	case hashSlots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func releaseHashSlot() { <-hashSlots }

// hashPassword returns an argon2id PHC string for password.
func hashPassword(ctx context.Context, password string) (string, error) {
	if err := acquireHashSlot(ctx); err != nil {
		return "", err
	}
	defer releaseHashSlot()
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var errBadHash = errors.New("password hash is not an argon2id PHC string")

// verifyPassword reports whether password matches the PHC string encoded,
// in constant time.
func verifyPassword(ctx context.Context, encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var memory, iterations uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &iterations, &threads); err != nil ||
		memory == 0 || memory > 1<<20 || iterations == 0 || iterations > 16 || threads == 0 {
		return false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 128 {
		return false, errBadHash
	}
	if err := acquireHashSlot(ctx); err != nil {
		return false, err
	}
	defer releaseHashSlot()
	got := argon2.IDKey([]byte(password), salt, iterations, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is verified against when an email is unknown, so that a failed
// sign-in takes as long whether or not the account exists. It is made once,
// by New before the server answers anything, rather than as the package is
// initialised: a process that serves no web pages (a worker, the emulator)
// does not spend argonMemory on it as it starts.
var dummyHash = sync.OnceValue(func() string {
	h, err := hashPassword(context.Background(), "not a real password, only for timing")
	if err != nil {
		panic(err)
	}
	return h
})

// checkNewPassword validates a password chosen by a user.
func checkNewPassword(password string) error {
	switch n := len([]rune(password)); {
	case n < minPasswordLen:
		return hoard.Errorf(hoard.EINVALID, "The password must be at least %d characters long.", minPasswordLen)
	case n > maxPasswordLen:
		return hoard.Errorf(hoard.EINVALID, "The password must be at most %d characters long.", maxPasswordLen)
	}
	return nil
}
