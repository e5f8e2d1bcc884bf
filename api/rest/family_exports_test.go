package rest_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
)

// runFamilyExport runs the export's job as the worker would.
func runFamilyExport(t *testing.T, e *apitest.Env, familyID uuid.UUID, id string) {
	t.Helper()
	task, err := jobs.NewFamilyExportTask(familyID, uuid.MustParse(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&jobs.Handlers{Store: e.Store, Log: e.Logger()}).FamilyExport(context.Background(),
		asynq.NewTask(task.Type(), task.Payload())); err != nil {
		t.Fatal(err)
	}
}

// TestFamilyExports: an admin queues an export (202, pending), the job
// writes it, the download is the reference's ZIP with this family's data
// only; before that the download is a 422; a member and a read key are
// refused the POST; Beta sees none of Alpha's exports (404); a rerun of
// the job leaves the completed export as it was.
func TestFamilyExports(t *testing.T) {
	e := apitest.NewEnv(t)
	a, b := e.Alpha, e.Beta
	e.Do("POST", "/api/v1/transactions", a.Key, map[string]any{"transaction": map[string]any{"account_id": a.Account.ID.String(),
		"date": "2024-03-01", "amount": "10.25", "name": "Coffee", "nature": "expense"}}).WantJSON(t, 201)
	e.Do("POST", "/api/v1/transactions", b.Key, map[string]any{"transaction": map[string]any{"account_id": b.Account.ID.String(),
		"date": "2024-03-01", "amount": "99", "name": "Beta's secret", "nature": "expense"}}).WantJSON(t, 201)

	_, memberKey := memberKey(t, e, a.Family, "m-"+a.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	apitest.WantError(t, e.Do("POST", "/api/v1/family_exports", memberKey, nil), 403, "forbidden")
	apitest.WantError(t, e.Do("GET", "/api/v1/family_exports", memberKey, nil), 403, "forbidden")
	apitest.WantError(t, e.Do("POST", "/api/v1/family_exports", a.ReadKey, nil), 403, "insufficient_scope")

	created := e.Do("POST", "/api/v1/family_exports", a.Key, nil).WantJSON(t, 202)["data"].(map[string]any)
	id := created["id"].(string)
	if created["status"] != "pending" || created["download_url"] != nil || !strings.HasPrefix(created["filename"].(string), "sure_export_") {
		t.Fatalf("created: %v", created)
	}
	if _, err := asynq.NewInspector(e.Redis).GetTaskInfo(jobs.QueueLow, jobs.TypeFamilyExport+":"+id); err != nil {
		t.Fatalf("export not queued: %v", err)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/family_exports/"+id+"/download", a.Key, nil), 422, "export_not_ready")

	runFamilyExport(t, e, a.Family.ID, id)
	shown := e.Do("GET", "/api/v1/family_exports/"+id, a.ReadKey, nil).WantJSON(t, 200)["data"].(map[string]any)
	if shown["status"] != "completed" || shown["download_url"] != "/api/v1/family_exports/"+id+"/download" ||
		shown["byte_size"].(float64) <= 0 || shown["completed_at"] == nil {
		t.Fatalf("shown: %v", shown)
	}
	list := e.Do("GET", "/api/v1/family_exports?per_page=1", a.ReadKey, nil).WantJSON(t, 200)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id ||
		list["meta"].(map[string]any)["total_count"] != float64(1) {
		t.Fatalf("list: %v", list)
	}

	dl := e.Do("GET", "/api/v1/family_exports/"+id+"/download", a.ReadKey, nil)
	if dl.Status != 200 || dl.Header.Get("Content-Type") != "application/zip" ||
		!strings.Contains(dl.Header.Get("Content-Disposition"), shown["filename"].(string)) {
		t.Fatalf("download: %d %v", dl.Status, dl.Header)
	}
	if int64(len(dl.Body)) != int64(shown["byte_size"].(float64)) {
		t.Fatalf("downloaded %d bytes, the export says %v", len(dl.Body), shown["byte_size"])
	}
	z, err := zip.NewReader(bytes.NewReader(dl.Body), int64(len(dl.Body)))
	if err != nil {
		t.Fatal(err)
	}
	var ndjson string
	for _, f := range z.File {
		if f.Name == "all.ndjson" {
			r, _ := f.Open()
			raw, _ := io.ReadAll(r)
			ndjson = string(raw)
		}
	}
	if !strings.Contains(ndjson, `"name":"Coffee"`) || !strings.Contains(ndjson, `"amount":"10.25"`) ||
		strings.Contains(ndjson, "Beta's secret") || strings.Contains(ndjson, b.Family.ID.String()) {
		t.Fatalf("all.ndjson: %s", ndjson)
	}

	// A rerun of the job (a retry after the work committed) changes nothing.
	runFamilyExport(t, e, a.Family.ID, id)
	again := e.Do("GET", "/api/v1/family_exports/"+id, a.Key, nil).WantJSON(t, 200)["data"].(map[string]any)
	if again["completed_at"] != shown["completed_at"] || again["byte_size"] != shown["byte_size"] {
		t.Fatalf("rerun changed the export: %v, was %v", again, shown)
	}

	// Beta's admin key: none of Alpha's exports, by any door.
	for _, path := range []string{"/api/v1/family_exports/" + id, "/api/v1/family_exports/" + id + "/download"} {
		apitest.WantError(t, e.Do("GET", path, b.Key, nil), 404, "not_found")
	}
	if got := e.Do("GET", "/api/v1/family_exports", b.Key, nil).WantJSON(t, 200); len(got["data"].([]any)) != 0 {
		t.Fatalf("beta lists: %v", got)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/family_exports/not-an-id", a.Key, nil), 404, "not_found")
}
