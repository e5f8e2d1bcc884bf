package apitest

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api"
	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/assistant/assistanttest"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/money"
)

// Answerer runs chat replies as the worker would, against a fake model.
type Answerer struct {
	h    *assistant.Handlers
	Fake *assistanttest.Server
}

func NewAnswerer(t *testing.T, e *Env, script func(int, *assistanttest.Request) assistanttest.Reply) *Answerer {
	fake := assistanttest.New(t, script)
	return &Answerer{Fake: fake, h: &assistant.Handlers{Store: e.Store, Redis: e.RDB, Log: e.Logger(),
		Options: assistant.Options{BaseURL: fake.URL, Model: "m", MaxToolRounds: 8, Timeout: time.Minute,
			RetryWait: time.Second}}}
}

func (a *Answerer) Answer(t *testing.T, familyID uuid.UUID, chatID, messageID string) {
	t.Helper()
	task, err := jobs.NewChatReplyTask(familyID, uuid.MustParse(chatID), uuid.MustParse(messageID))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.h.ChatReply(context.Background(), asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
}

// BridgeEnv is an env whose SimpleFIN client may reach a fake Bridge on
// loopback over plain HTTP, with a fresh fake; opts change the env further.
func BridgeEnv(t *testing.T, opts ...func(*api.Options)) (*Env, *bridgetest.Server) {
	t.Helper()
	e := NewEnv(t, append([]func(*api.Options){func(o *api.Options) { o.SimpleFINAllowHTTP = true }}, opts...)...)
	return e, bridgetest.New(t)
}

// Upload sends a multipart form with a file part "file" and the fields,
// and checks the response against the OpenAPI document.
func (e *Env) Upload(path, key, filename string, file []byte, fields map[string]string) Response {
	e.T.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if file != nil {
		fw, err := w.CreateFormFile("file", filename)
		if err != nil {
			e.T.Fatal(err)
		}
		_, _ = fw.Write(file)
	}
	_ = w.Close()
	req := httptest.NewRequest("POST", path, bytes.NewReader(body.Bytes()))
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Api-Key", key)
	resp, err := e.App.Test(req, -1)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	NoLeak(e.T, r)
	e.Validate(req, r)
	return r
}

// FinishImport runs the import's job steps (the worker's part) to the end.
func (e *Env) FinishImport(t *testing.T, familyID, id string) {
	t.Helper()
	fam, imp := uuid.MustParse(familyID), uuid.MustParse(id)
	for range 100 {
		_, done, err := e.Store.ImportStep(context.Background(), fam, imp, nil)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
	}
	t.Fatal("import never finished")
}

// RuleFixtures are a category and a few transactions of alpha.
func RuleFixtures(t *testing.T, e *Env) (cat *models.Category, ids []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	cat = &models.Category{FamilyID: e.Alpha.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := e.Store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"Starbucks 1", "Grocer", "STARBUCKS 2", "Rent"} {
		tx := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: "2024-02-01",
			Amount: money.Amount(10000 * (i + 1)), Currency: "USD", Name: name}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tx.ID)
	}
	return cat, ids
}

// smallLedger is alpha's checking account and a card, two categories and
// a transaction in each account, the market run tagged.
type smallLedger struct {
	Card           *models.Account
	Groceries, Fun *models.Category
	tag            *models.Tag
	Market, coffee *models.Transaction
}

func NewSmallLedger(t *testing.T, e *Env) smallLedger {
	t.Helper()
	ctx, fam := t.Context(), e.Alpha.Family.ID
	l := smallLedger{
		Card:      &models.Account{FamilyID: fam, Name: "Visa", AccountType: "credit_card", Currency: "USD"},
		Groceries: &models.Category{FamilyID: fam, Name: "Groceries", Color: "#112233", Classification: "expense"},
		Fun:       &models.Category{FamilyID: fam, Name: "Fun", Color: "#112233", Classification: "expense"},
		tag:       &models.Tag{FamilyID: fam, Name: "weekly", Color: "#112233"},
	}
	for _, err := range []error{e.Store.CreateAccount(ctx, l.Card), e.Store.CreateCategory(ctx, l.Groceries),
		e.Store.CreateCategory(ctx, l.Fun), e.Store.CreateTag(ctx, l.tag)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	l.Market = &models.Transaction{FamilyID: fam, AccountID: e.Alpha.Account.ID, Date: "2026-01-05", Amount: 42_5000, Currency: "USD", Name: "Corner market"}
	l.coffee = &models.Transaction{FamilyID: fam, AccountID: l.Card.ID, Date: "2026-01-06", Amount: 4_5000, Currency: "USD", Name: "Coffee"}
	for _, tx := range []struct {
		t    *models.Transaction
		tags []uuid.UUID
	}{{l.Market, []uuid.UUID{l.tag.ID}}, {l.coffee, nil}} {
		if _, _, err := e.Store.CreateTransaction(ctx, tx.t, tx.tags); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// Stored is the alpha family's transaction id as the database has it now.
func Stored(t *testing.T, e *Env, id uuid.UUID) *models.Transaction {
	t.Helper()
	tx, err := e.Store.Transaction(t.Context(), e.Alpha.Family.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}
