package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs/mail"
	"coffer/models"
)

// Sending: at least once, and never twice but in one window that no
// sender can close.
//
// A send claims its outbox row for notifyLease (status sending), mails
// it, then marks it sent. A second run of the task (a retry, the sweep's
// requeue, a second worker) finds the row sent, or claimed: it mails
// nothing while the lease holds, and the lease outlasts any live send
// (notifySendTimeout bounds the task, mail's own timeout the SMTP
// conversation), so only a dead sender's row is claimed again.
//
// A worker killed mid-send, before the server's 250 to the final dot of
// DATA, leaves no email: the server discards a message whose DATA did not
// finish, and the claim runs out and the row is sent once more. The
// window that remains is from that 250 to the commit that marks the row
// sent (one local UPDATE): a worker killed there leaves an email the
// server took and a row that looks unsent, so it is sent again after the
// lease. It cannot be closed: SMTP has no way to ask a server whether it
// took a message, and marking the row before the 250 would trade the
// second email for none when the server refuses or the connection drops.
// Shutting down (SIGTERM) does not widen it: the mark is written with a
// context the shutdown does not cancel. Both copies carry one Message-ID,
// so a mail store that folds repeats shows one.

// notifyLease is how long a claim holds a row; notifySendTimeout bounds a
// send's whole run, well inside it.
const (
	notifyLease       = 10 * time.Minute
	notifySendTimeout = 2 * time.Minute
)

// NotifySend mails one outbox row, once (see above).
func (h *Handlers) NotifySend(ctx context.Context, t *asynq.Task) error {
	var p NotifySendPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	if h.Mail == nil {
		return fmt.Errorf("jobs: notification %s: no mailer: %w", p.NotificationID, asynq.SkipRetry) // the sweep tries again
	}
	n, heldUntil, err := h.Store.ClaimNotification(ctx, p.FamilyID, p.NotificationID, notifyLease)
	switch {
	case err != nil:
		return err
	case heldUntil != nil: // another run is sending it, or died doing so: look again when its lease ends
		return &DeferError{Until: heldUntil.Add(time.Second)}
	case n == nil:
		return nil // sent, dropped or gone
	}
	u, err := h.Store.User(ctx, n.FamilyID, n.UserID)
	if errors.Is(err, models.ErrNotFound) || err == nil && u.Status != models.UserActive {
		return h.Store.ReleaseNotification(context.WithoutCancel(ctx), n, "The person is no longer active", true)
	}
	if err != nil {
		return err
	}
	msg, err := h.composeNotification(n)
	if err != nil {
		return h.Store.ReleaseNotification(context.WithoutCancel(ctx), n, "Cannot be written: "+err.Error(), true)
	}
	msg.To, msg.ID = u.Email, "notification-"+n.ID.String()
	h.hook(ctx, HookNotifyClaimed)
	if err := h.Mail.SendMessage(ctx, msg); err != nil {
		if ctx.Err() != nil {
			// Cut off: the lease stays, as a killed worker's would, since
			// whether the server took it is not known here.
			return err
		}
		if rerr := h.Store.ReleaseNotification(ctx, n, err.Error(), false); rerr != nil {
			return rerr
		}
		if errors.Is(err, mail.ErrNoMail) {
			return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
		}
		return err
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return h.Store.MarkNotificationSent(mctx, n)
}
