package telegram_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/telegram"
	"github.com/graphctl/graphctl/builtin-nodes/telegram/tgtest"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

// TestWebhookTurnCutByShutdownSendsNoNotice: a webhook turn whose run the
// server cuts while the model is answering (a shutdown: the runtime resumes
// the run at its next start, and that run answers) sends the user no
// failure notice; the call is not answered 200, so that Telegram may deliver
// the update again.
func TestWebhookTurnCutByShutdownSendsNoNotice(t *testing.T) {
	held := llmtest.Text("too late")
	held.Delay = time.Minute // until the request is given up
	model := llmtest.NewServer(t, llmtest.WithReplies(held))
	env := map[string]string{"OPENAI_BASE_URL": model.URL(), "OPENAI_API_KEY": "test"}
	models := llm.NewModels(func(k string) string { return env[k] })

	src := strings.Replace(graphSrc, `defaults: llm: "script:none"`, `defaults: llm: "openai:gpt-4o-mini"`, 1)
	g, db := loadOnBadger(t, "tg.cue", src)
	bot := tgtest.NewServer(t, "42:secret")
	eng := engine.New(g, db.Checkpointer(), engine.Options{Store: db.Store(),
		Extra: llm.ServiceKey.Bind(telegram.BotKey.Bind(node.Extra{}, bot.Client()), models)})
	defer eng.Close()

	// The server's runs live on its own context, which its shutdown
	// cancels; the webhook call's context goes on.
	server, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	ad := &telegram.Adapter{Client: bot.Client(), Run: func(ctx context.Context, thread string, input map[string]any, sink event.Sink) error {
		res, err := eng.Run(server, engine.Request{ThreadID: thread, Input: input}, sink)
		if err != nil {
			return err
		}
		if res.Status == engine.StatusError {
			return res.Err
		}
		return nil
	}}
	h := httptest.NewServer(ad.Handler(""))
	defer h.Close()

	const user = 161
	code := postUpdate(h.URL, textUpdate(1, user, "hello"))
	for len(model.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	shutdown()
	if c := <-code; c == http.StatusOK || c == 0 {
		t.Errorf("the cut turn's call answered %d, want an error status (the update is delivered again)", c)
	}
	if got := bot.Transcript(user); len(got) > 0 {
		t.Errorf("the user got %q for a turn the shutdown cut, want nothing", got)
	}
}
