package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"coffer/api/httperr"
	"coffer/jobs/assistant"
	"coffer/models"
)

// chatStreamLimit bounds one chat stream; a client reconnects for more.
const chatStreamLimit = 10 * time.Minute

// ChatStream answers with the reply being made in chat as server-sent
// events, relayed from the job through Redis so that any web process can
// serve them: "delta" (more text), "restart" (drop the text so far),
// "tool" (a tool is called), then "done" or "error", after which it ends.
// With no reply pending it sends one "idle" event and ends. The JSON API
// and the chat screen both serve it.
func ChatStream(c *fiber.Ctx, store *models.Store, rdb redis.UniversalClient, chat *models.Chat) error {
	ctx := c.UserContext()
	// Subscribe before looking at the chat, so that an answer stored in
	// between is either seen as stored or heard on the channel. The body
	// is written after the handler returns, past the request's deadline: a
	// client that goes away shows as a failed write and ends it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chatStreamLimit)
	sub := rdb.Subscribe(sctx, assistant.StreamChannel(chat.ID))
	stop := func() { sub.Close(); cancel() }
	if _, err := sub.Receive(ctx); err != nil {
		stop()
		return httperr.Unavailable("The stream is not available right now. Please try again later.", err)
	}
	pending, err := store.ChatPending(ctx, chat)
	if err != nil {
		stop()
		return err
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	idle := chat.Error
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer stop()
		send := func(typ string, data any) bool {
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
			return w.Flush() == nil
		}
		if !pending {
			send("idle", fiber.Map{"type": "idle", "error": idle})
			return
		}
		keepAlive := time.NewTicker(15 * time.Second)
		defer keepAlive.Stop()
		events := sub.Channel()
		for {
			select {
			case <-sctx.Done():
				return
			case <-keepAlive.C:
				if _, err := w.WriteString(": keep-alive\n\n"); err != nil || w.Flush() != nil {
					return
				}
			case m, ok := <-events:
				if !ok {
					return
				}
				var e assistant.Event
				if json.Unmarshal([]byte(m.Payload), &e) != nil {
					continue
				}
				if !send(e.Type, e) || e.Type == "done" || e.Type == "error" {
					return
				}
			}
		}
	})
	return nil
}
