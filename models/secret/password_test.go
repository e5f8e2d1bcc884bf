package secret_test

import (
	"testing"

	"golang.org/x/crypto/bcrypt"

	"coffer/models/secret"
)

var cheap = secret.Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1}

func TestPasswords(t *testing.T) {
	h, err := secret.HashPassword("correct horse battery", cheap)
	if err != nil {
		t.Fatal(err)
	}
	if ok, rehash, err := secret.CheckPassword(h, "correct horse battery", cheap); !ok || rehash || err != nil {
		t.Errorf("right password: ok=%v rehash=%v err=%v", ok, rehash, err)
	}
	if ok, _, _ := secret.CheckPassword(h, "wrong", cheap); ok {
		t.Error("wrong password accepted")
	}
	if ok, rehash, _ := secret.CheckPassword(h, "correct horse battery", secret.DefaultArgon2); !ok || !rehash {
		t.Error("weaker parameters should ask for a rehash")
	}
	b, _ := bcrypt.GenerateFromPassword([]byte("imported password"), 4)
	if ok, rehash, err := secret.CheckPassword(string(b), "imported password", cheap); !ok || !rehash || err != nil {
		t.Errorf("bcrypt: ok=%v rehash=%v err=%v", ok, rehash, err)
	}
	for _, bad := range []string{"", "$argon2id$", "$argon2id$v=19$m=1,t=0,p=1$xx$yy", "plain", "$argon2id$v=18$m=64,t=1,p=1$AAAA$AAAA"} {
		if ok, _, err := secret.CheckPassword(bad, "x", cheap); ok || err == nil {
			t.Errorf("%q: ok=%v err=%v", bad, ok, err)
		}
	}
}
