package worker_test

import (
	"crypto/rand"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/models/modelstest"
	"coffer/worker"
)

// everyTask builds one task of every type the code defines, each with its
// own constructor; the ids name nothing, so most handlers find nothing to
// do.
func everyTask(t *testing.T) []*asynq.Task {
	t.Helper()
	a, b := uuid.New(), uuid.New()
	var tasks []*asynq.Task
	add := func(task *asynq.Task, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task)
	}
	add(jobs.NewAccountBalanceTask(a, b))
	add(jobs.NewBalanceSweepTask(), nil)
	add(jobs.NewBalanceMovesSweepTask(), nil)
	add(jobs.NewSumsCompactSweepTask(), nil)
	add(jobs.NewChatReplyTask(a, b, uuid.New()))
	add(jobs.NewRequeueTask(), nil)
	add(jobs.NewAuditArchiveTask(), nil)
	add(jobs.NewRolesSyncTask(a, b))
	add(jobs.NewSecretsBackfillTask(), nil)
	add(jobs.NewFamilyPurgeTask(a))
	add(jobs.NewFamilyResetTask(a))
	add(jobs.NewFamilyExportTask(a, b))
	add(jobs.NewOAuthCleanupTask(), nil)
	add(jobs.NewImportPublishTask(a, b, time.Now()))
	add(jobs.NewImportRevertTask(a, b, time.Now()))
	add(jobs.NewRestoreRunTask(a, b))
	add(jobs.NewRuleApplyTask(a, b))
	add(jobs.NewExchangeRatesFetchTask(&a))
	add(jobs.NewWebhookSweepTask(), nil)
	add(jobs.NewWebhookScanTask(a))
	add(jobs.NewWebhookDeliverTask(a, b, 0, 0))
	add(jobs.NewRecurringDetectTask(a))
	add(jobs.NewRecurringSweepTask(), nil)
	add(jobs.NewRecurringMissedTask(a))
	add(jobs.NewNotifySweepTask(), nil)
	add(jobs.NewNotifyPlanTask(a))
	add(jobs.NewNotifySendTask(a, b))
	add(simplefin.NewClaimTask(a, b, 1))
	add(simplefin.NewFetchInfoTask(a, b))
	add(simplefin.NewSyncTask(a, b))
	add(simplefin.NewImportTask(a, b))
	add(simplefin.NewPurgeTask(a, b))
	add(simplefin.NewScheduleTask(), nil)
	add(simplefin.NewSweepTask(), nil)
	return tasks
}

// TestEveryTaskTypeIsHandled enqueues one task of every type through a
// real asynq server running the worker's mux, on a queue of its own, and
// sees each one reach its handler. everyTask must name every Type…
// constant under jobs/, and every asynq.NewTask there must use one, so a
// new task type cannot be left out of the worker's tables unnoticed.
func TestEveryTaskTypeIsHandled(t *testing.T) {
	tasks := everyTask(t)
	built := map[string]bool{}
	for _, task := range tasks {
		built[task.Type()] = true
	}
	for _, typ := range sourceTaskTypes(t, filepath.Join("..", "jobs")) {
		if !built[typ] {
			t.Errorf("task type %q is defined under jobs/ but everyTask does not build it", typ)
		}
	}

	store := modelstest.NewStore(t)
	opt, rdb := modelstest.RedisClient(t, redisDB)
	queue := asynq.NewClientFromRedisClient(rdb)
	log := discardLog()
	retention, _ := jobs.RetentionTier("standard")
	o := worker.Options{Redis: opt, Logger: log,
		Handlers: &jobs.Handlers{Store: store, Queue: queue, Log: log, Retention: retention, ArchiveDir: t.TempDir()},
		SimpleFIN: &simplefin.Handlers{Store: store, Queue: queue, Log: log, Redis: rdb,
			Bridge: bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true})},
		Assistant: &assistant.Handlers{Store: store, Redis: rdb, Log: log}}
	table, err := o.Table()
	if err != nil {
		t.Fatal(err)
	}

	// A queue of this run only: no other test's task is taken, and task
	// ids and uniqueness locks cannot meet those of an earlier run.
	name := make([]byte, 6)
	_, _ = rand.Read(name)
	q := "registry-" + hex.EncodeToString(name)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	t.Cleanup(func() {
		_ = insp.DeleteQueue(q, true)
		// The queue rebuild queues a balance sweep on the usual queue.
		pending, _ := insp.ListPendingTasks(jobs.QueueLow)
		for _, ti := range pending {
			if ti.Type == jobs.TypeBalanceSweep {
				_ = insp.DeleteTask(jobs.QueueLow, ti.ID)
			}
		}
	})
	ids := map[string]string{} // task id → type
	for _, task := range tasks {
		// No retry: a run that fails is archived at once with its error.
		info, err := queue.Enqueue(task, asynq.Queue(q), asynq.MaxRetry(0), asynq.Retention(time.Hour))
		if err != nil {
			t.Fatalf("enqueue %s: %v", task.Type(), err)
		}
		ids[info.ID] = task.Type()
	}
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 4, Queues: map[string]int{q: 1},
		RetryDelayFunc: table.RetryDelay, IsFailure: jobs.IsFailure, LogLevel: asynq.FatalLevel})
	if err := srv.Start(worker.Mux(table, log)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)

	for id, typ := range ids {
		var info *asynq.TaskInfo
		waitFor(t, typ+" to run", func() (bool, string) {
			info, err = insp.GetTaskInfo(q, id)
			if err != nil {
				return false, err.Error()
			}
			return info.State == asynq.TaskStateCompleted || info.State == asynq.TaskStateArchived, info.State.String()
		})
		switch {
		case info.State == asynq.TaskStateCompleted:
		case strings.Contains(info.LastErr, "handler not found"):
			t.Errorf("%s: no handler is registered for it", typ)
		default:
			// It reached its handler, which refused a payload naming nothing.
			t.Logf("%s: handled, failed with %s", typ, info.LastErr)
		}
	}
}

// sourceTaskTypes returns the values of the Type… constants of every
// non-test Go file under dir, and fails on an asynq.NewTask or
// jobs.NewTask there whose type is not such a constant.
func sourceTaskTypes(t *testing.T, dir string) []string {
	t.Helper()
	var types []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if !strings.HasPrefix(id.Name, "Type") || i >= len(n.Values) {
						continue
					}
					if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						types = append(types, v)
					}
				}
			case *ast.FuncDecl:
				// jobs.NewTask hands its caller's type on to asynq; the
				// callers are checked instead.
				return n.Recv != nil || n.Name.Name != "NewTask"
			case *ast.CallExpr:
				if isNewTask(n.Fun) && len(n.Args) > 0 && !isTypeConstant(n.Args[0]) {
					t.Errorf("%s: NewTask with a type that is not a Type… constant", path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(types) == 0 {
		t.Fatalf("no Type… constants found under %s", dir)
	}
	sort.Strings(types)
	return types
}

// isNewTask reports whether fun is asynq.NewTask or jobs.NewTask (NewTask
// inside package jobs).
func isNewTask(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "NewTask"
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && f.Sel.Name == "NewTask" && (x.Name == "asynq" || x.Name == "jobs")
	}
	return false
}

func isTypeConstant(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return strings.HasPrefix(e.Name, "Type")
	case *ast.SelectorExpr:
		return strings.HasPrefix(e.Sel.Name, "Type")
	}
	return false
}
