// Package mail sends the service's plain-text emails through an SMTP
// server, or writes them to the log in development. The web side (resets,
// invitations) and the worker (notifications) share it; it imports
// nothing of ours and reads no environment: main.go hands it Options.
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	netmail "net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// Options configure sending.
type Options struct {
	SMTPURL string `env:"SMTP_URL" secret:"url"` // smtp://user:password@host:587 (smtps:// for TLS from the start); empty: no SMTP
	From    string `env:"MAIL_FROM" default:"coffer <no-reply@localhost>"`
	// LogOnly writes mails to the log instead of sending them: development
	// only, since a reset link in a log is a password in a log.
	LogOnly bool
}

// Message is one plain-text email.
type Message struct {
	To      string
	Subject string
	Body    string
	// ID, when set, is the Message-ID's local part: the same on every
	// attempt of one message, so a mail store that keeps one copy per
	// Message-ID folds a repeat.
	ID string
}

// Mailer sends mail through SMTP, or writes it to the log in development.
type Mailer struct {
	o   Options
	log *slog.Logger
}

// New returns a Mailer with these options.
func New(o Options, log *slog.Logger) *Mailer { return &Mailer{o: o, log: log} }

// ErrNoMail means the server has no way to send mail.
var ErrNoMail = errors.New("mail: no SMTP_URL configured")

// sendTimeout bounds one whole SMTP conversation.
const sendTimeout = time.Minute

// Send sends one plain-text mail, bounded by ctx.
func (m *Mailer) Send(ctx context.Context, to, subject, body string) error {
	return m.SendMessage(ctx, Message{To: to, Subject: subject, Body: body})
}

// SendMessage sends msg, bounded by ctx. When ctx ends mid-conversation
// the connection is closed at once: a server discards a message whose
// DATA did not end with its final dot, so an abandoned send leaves no
// mail behind, and only the server's 250 after that dot means sent.
func (m *Mailer) SendMessage(ctx context.Context, msg Message) error {
	if m.o.LogOnly {
		m.log.Info("mail (development: not sent)", "to", msg.To, "subject", msg.Subject, "body", msg.Body)
		return nil
	}
	if m.o.SMTPURL == "" {
		return ErrNoMail
	}
	u, err := url.Parse(m.o.SMTPURL)
	if err != nil {
		return fmt.Errorf("mail: SMTP_URL: %w", err)
	}
	host, _, err := net.SplitHostPort(u.Host)
	if err != nil {
		return fmt.Errorf("mail: SMTP_URL needs host:port: %w", err)
	}
	from, err := netmail.ParseAddress(m.o.From)
	if err != nil {
		return fmt.Errorf("mail: MAIL_FROM: %w", err)
	}
	to, err := netmail.ParseAddress(msg.To)
	if err != nil {
		return fmt.Errorf("mail: recipient: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return fmt.Errorf("mail: connect: %w", err)
	}
	defer conn.Close()
	// The conversation stops where it is when ctx ends (a worker shutting
	// down, the timeout): closing the socket fails the pending read or
	// write.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if u.Scheme == "smtps" {
		conn = tls.Client(conn, &tls.Config{ServerName: host})
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return ctxErr(ctx, fmt.Errorf("mail: greeting: %w", err))
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && u.Scheme != "smtps" {
		if err := c.StartTLS(&tls.Config{ServerName: host}); err != nil {
			return ctxErr(ctx, fmt.Errorf("mail: STARTTLS: %w", err))
		}
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		if err := c.Auth(smtp.PlainAuth("", u.User.Username(), pw, host)); err != nil {
			return ctxErr(ctx, fmt.Errorf("mail: auth: %w", err))
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return ctxErr(ctx, fmt.Errorf("mail: MAIL FROM: %w", err))
	}
	if err := c.Rcpt(to.Address); err != nil {
		return ctxErr(ctx, fmt.Errorf("mail: RCPT TO: %w", err))
	}
	w, err := c.Data()
	if err != nil {
		return ctxErr(ctx, fmt.Errorf("mail: DATA: %w", err))
	}
	if _, err := w.Write(m.compose(from, to, msg)); err != nil {
		return ctxErr(ctx, fmt.Errorf("mail: write: %w", err))
	}
	// Close sends the final dot and reads the server's answer: from its
	// 250 on, the message is the server's.
	if err := w.Close(); err != nil {
		return ctxErr(ctx, fmt.Errorf("mail: end of DATA: %w", err))
	}
	_ = c.Quit() // delivered already; a failed goodbye changes nothing
	return nil
}

// compose is the message's header and body. The text/template-free
// header lines carry no CR or LF from the input (no header injection).
func (m *Mailer) compose(from, to *netmail.Address, msg Message) []byte {
	line := func(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }
	h := []string{
		"From: " + addr(from), "To: " + addr(to), "Subject: " + mime.QEncoding.Encode("utf-8", line(msg.Subject)),
		"Date: " + time.Now().UTC().Format(time.RFC1123Z),
		"MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit",
	}
	if msg.ID != "" {
		domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
		h = append(h, "Message-ID: <"+line(msg.ID)+"@"+domain+">")
	}
	// The data writer turns each \n into \r\n and escapes leading dots.
	body := strings.ReplaceAll(msg.Body, "\r\n", "\n")
	return []byte(strings.Join(h, "\n") + "\n\n" + body)
}

// addr is a as a header shows it: the bare address when it has no name.
func addr(a *netmail.Address) string {
	if a.Name == "" {
		return a.Address
	}
	return a.String()
}

// ctxErr prefers ctx's error: a conversation cut by ctx fails on a closed
// socket, which says less than why it was closed.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}
