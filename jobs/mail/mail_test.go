package mail_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"coffer/jobs/mail"
	"coffer/jobs/mail/mailtest"
)

// TestSendThroughSMTP: a message reaches a real SMTP server on loopback
// with its envelope, headers (an encoded subject, the Message-ID) and
// body, dots and all.
func TestSendThroughSMTP(t *testing.T) {
	srv := mailtest.Start(t)
	m := mail.New(mail.Options{SMTPURL: srv.URL(), From: "coffer <no-reply@example.com>"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	err := m.SendMessage(context.Background(), mail.Message{To: "ann@example.com", Subject: "Über budget\r\nBcc: evil@example.com",
		Body: "line one\n.starts with a dot\n", ID: "n-1"})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Wait(t, 1)[0]
	if got.From != "no-reply@example.com" || len(got.To) != 1 || got.To[0] != "ann@example.com" {
		t.Errorf("envelope: %+v", got)
	}
	if got.Header("Message-ID") != "<n-1@example.com>" || got.Header("Bcc") != "" || !strings.HasPrefix(got.Header("Subject"), "=?utf-8?q?") {
		t.Errorf("header: %q", got.Data)
	}
	if got.Body() != "line one\n.starts with a dot\n" {
		t.Errorf("body: %q", got.Body())
	}
}

// TestSendCutMidData: a send whose context ends in the middle of DATA
// closes its connection, and the server discards the torn message.
func TestSendCutMidData(t *testing.T) {
	srv := mailtest.Start(t)
	m := mail.New(mail.Options{SMTPURL: srv.URL(), From: "no-reply@example.com"}, nil)
	held := srv.HoldNext()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Send(ctx, "ann@example.com", "Hi", "body") }()
	<-held
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cut send: %v", err)
	}
	// A second message on a new connection arrives alone.
	if err := m.Send(context.Background(), "ann@example.com", "Again", "body"); err != nil {
		t.Fatal(err)
	}
	if ms := srv.Wait(t, 1); len(ms) != 1 || ms[0].Header("Subject") != "Again" {
		t.Fatalf("mails: %+v", ms)
	}
	srv.WaitTorn(t, 1)
}

// TestNoSMTP: without SMTP_URL there is no way to send.
func TestNoSMTP(t *testing.T) {
	if err := mail.New(mail.Options{}, nil).Send(context.Background(), "a@example.com", "s", "b"); !errors.Is(err, mail.ErrNoMail) {
		t.Fatal(err)
	}
}
