package web

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// MailOptions configure the few emails the service sends (password resets).
type MailOptions struct {
	SMTPURL string `env:"SMTP_URL" secret:"url"` // smtp://user:password@host:587; empty: no SMTP
	From    string `env:"MAIL_FROM" default:"coffer <no-reply@localhost>"`
	// LogOnly writes mails to the log instead of sending them: development
	// only, since a reset link in a log is a password in a log.
	LogOnly bool
}

// Mailer sends mail through SMTP, or writes it to the log in development.
type Mailer struct {
	o   MailOptions
	log *slog.Logger
}

// NewMailer returns a Mailer with these options.
func NewMailer(o MailOptions, log *slog.Logger) *Mailer { return &Mailer{o: o, log: log} }

// ErrNoMail means the server has no way to send mail.
var ErrNoMail = fmt.Errorf("api: no SMTP_URL configured")

// Send sends one plain-text mail, bounded by ctx.
func (m *Mailer) Send(ctx context.Context, to, subject, body string) error {
	if m.o.LogOnly {
		m.log.Info("mail (development: not sent)", "to", to, "subject", subject, "body", body)
		return nil
	}
	if m.o.SMTPURL == "" {
		return ErrNoMail
	}
	u, err := url.Parse(m.o.SMTPURL)
	if err != nil {
		return fmt.Errorf("api: SMTP_URL: %w", err)
	}
	host, _, err := net.SplitHostPort(u.Host)
	if err != nil {
		return fmt.Errorf("api: SMTP_URL needs host:port: %w", err)
	}
	var auth smtp.Auth
	if u.User != nil {
		pw, _ := u.User.Password()
		auth = smtp.PlainAuth("", u.User.Username(), pw, host)
	}
	msg := strings.Join([]string{
		"From: " + m.o.From, "To: " + to, "Subject: " + subject,
		"Date: " + time.Now().UTC().Format(time.RFC1123Z),
		"MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "", body,
	}, "\r\n")
	done := make(chan error, 1)
	go func() { done <- smtp.SendMail(u.Host, auth, m.o.From, []string{to}, []byte(msg)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
