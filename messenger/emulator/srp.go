package emulator

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/binary"
	"math/big"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
)

// Two-step verification (SRP, core.telegram.org/api/srp), server side: the
// account of a seed with "password" answers SESSION_PASSWORD_NEEDED to a
// correct code, then account.getPassword + auth.checkPassword.

// srpPrime is the platform's 2048-bit safe prime (generator 3).
var srpPrime, _ = new(big.Int).SetString("C71CAEB9C6B1C9048E6C522F70F13F73980D40238E3E21C14934D037563D930F"+
	"48198A0AA7C14058229493D22530F4DBFA336F6E0AC925139543AED44CCE7C37"+
	"20FD51F69458705AC68CD4FE6B6B13ABDC9746512969328454F18FAF8C595F64"+
	"2477FE96BB2A941D5BCD1D4AC8CC49880708FA9B378E3C4F3A9060BEE67CF9A4"+
	"A4A695811051907E162753B56B0F6B410DBA74D8A84B2A14B3144E0EF1284754"+
	"FD17ED950D5965B4B9DD46582DB1178D169C6BC465B0D6FF9CA3928FEF5B9AE4"+
	"E418FC15E83EBEA0F87FA9FF5EED70050DED2849F47BF959D956850CE929851F"+
	"0D8115F635B105EE2E4E15D04B2454BF6F4FADF034B10403119CD8E3B92FCC5B", 16)

const srpG = 3

type srpPassword struct {
	salt1, salt2 []byte
	v            *big.Int
}

type srpSession struct {
	userID int64
	b, B   *big.Int
}

func sha(parts ...[]byte) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

func pad256(i *big.Int) []byte {
	b := make([]byte, 256)
	return i.FillBytes(b)
}

// newSRPPassword derives the verifier v = g^x mod p, x = PH2(password).
func (e *Emulator) newSRPPassword(password string) (*srpPassword, error) {
	salt1 := make([]byte, 40)
	salt2 := make([]byte, 16)
	for _, s := range [][]byte{salt1, salt2} {
		for i := 0; i < len(s); i += 8 {
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], e.rng.next())
			copy(s[i:], w[:])
		}
	}
	sh := func(data, salt []byte) []byte { return sha(salt, data, salt) }
	ph1 := sh(sh([]byte(password), salt1), salt2)
	key, err := pbkdf2.Key(sha512.New, string(ph1), salt1, 100000, 64)
	if err != nil {
		return nil, err
	}
	x := new(big.Int).SetBytes(sh(key, salt2))
	return &srpPassword{salt1: salt1, salt2: salt2, v: new(big.Int).Exp(big.NewInt(srpG), x, srpPrime)}, nil
}

func (p *srpPassword) algo() *tg.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow {
	return &tg.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow{
		Salt1: p.salt1, Salt2: p.salt2, G: srpG, P: pad256(srpPrime),
	}
}

func accountGetPassword(c *call, _ bin.Object) (bin.Encoder, []pending, error) {
	u := c.pending2FA()
	if u == nil || u.password == nil {
		return &tg.AccountPassword{NewAlgo: &tg.PasswordKdfAlgoUnknown{}, NewSecureAlgo: &tg.SecurePasswordKdfAlgoUnknown{},
			SecureRandom: randomBytes(256)}, nil, nil
	}
	g := big.NewInt(srpG)
	k := new(big.Int).SetBytes(sha(pad256(srpPrime), pad256(g)))
	b := new(big.Int).SetBytes(randomBytes(256))
	// B = (k*v + g^b) mod p
	B := new(big.Int).Mul(k, u.password.v)
	B.Add(B, new(big.Int).Exp(g, b, srpPrime)).Mod(B, srpPrime)
	id := int64(c.e.rng.next() >> 1)
	c.e.srp[id] = &srpSession{userID: u.id, b: b, B: B}
	return &tg.AccountPassword{
		HasPassword: true, CurrentAlgo: u.password.algo(), SRPB: pad256(B), SRPID: id,
		NewAlgo: u.password.algo(), NewSecureAlgo: &tg.SecurePasswordKdfAlgoUnknown{}, SecureRandom: randomBytes(256),
	}, nil, nil
}

func authCheckPassword(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.AuthCheckPasswordRequest)
	in, ok := r.Password.(*tg.InputCheckPasswordSRP)
	pend := c.pending2FA()
	if !ok || pend == nil {
		return nil, nil, tgerr.New(400, "SRP_ID_INVALID")
	}
	s := c.e.srp[in.SRPID]
	if s == nil || s.userID != pend.id {
		return nil, nil, tgerr.New(400, "SRP_ID_INVALID")
	}
	delete(c.e.srp, in.SRPID)
	pw := pend.password
	A := new(big.Int).SetBytes(in.A)
	if A.Sign() <= 0 || A.Cmp(srpPrime) >= 0 {
		return nil, nil, tgerr.New(400, "SRP_A_INVALID")
	}
	u := new(big.Int).SetBytes(sha(pad256(A), pad256(s.B)))
	// S = (A * v^u)^b mod p
	S := new(big.Int).Exp(pw.v, u, srpPrime)
	S.Mul(S, A).Mod(S, srpPrime)
	S.Exp(S, s.b, srpPrime)
	K := sha(pad256(S))
	hp, hg := sha(pad256(srpPrime)), sha(pad256(big.NewInt(srpG)))
	x := make([]byte, len(hp))
	for i := range x {
		x[i] = hp[i] ^ hg[i]
	}
	m1 := sha(x, sha(pw.salt1), sha(pw.salt2), pad256(A), pad256(s.B), K)
	if subtle.ConstantTimeCompare(m1, in.M1) != 1 {
		return nil, nil, tgerr.New(400, "PASSWORD_HASH_INVALID")
	}
	delete(c.e.awaiting2FA, c.session.AuthKey.ID)
	c.e.auth[c.session.AuthKey.ID] = pend.id
	c.user = pend
	c.track()
	return &tg.AuthAuthorization{User: c.e.userView(pend.id, pend)}, nil, nil
}

// pending2FA returns the user whose login on this key waits for the
// password. Called under e.mu.
func (c *call) pending2FA() *user {
	if id, ok := c.e.awaiting2FA[c.session.AuthKey.ID]; ok {
		return c.e.users[id]
	}
	return nil
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
