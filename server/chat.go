package server

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/sse"
)

// The chat endpoints: a chat graph's runs streamed as
// `data: {"type", "payload"}` events (text, emotion, hitl, tool_result, done,
// error), image uploads, and answers to human-in-the-loop forms (HITL) and
// to the interrupts of the answer kinds the application adds (AnswerKind),
// stored first and then used to resume.

// responseKind names a kind of answer: formAnswers or an AnswerKind's name.
type responseKind string

// responseNS is where answers wait for their continue call.
func responseNS(kind responseKind) []string { return []string{"graphctl", string(kind)} }

func (s *Server) chatGraph() (*graphs.Version, error) {
	if s.cfg.ChatGraph == "" {
		return nil, notFound("this server has no chat graph (start it with --chat-graph NAME)")
	}
	v, ok := s.reg.Get(s.cfg.ChatGraph)
	if !ok {
		return nil, notFound("chat graph %q is not loaded (start the server with --chat-graph NAME)", s.cfg.ChatGraph)
	}
	return v, nil
}

type chatBody struct {
	Message   string `json:"message"`
	SessionID string `json:"session_id"`
	ThreadID  string `json:"thread_id"`
	UserID    string `json:"user_id"`
}

func (b *chatBody) session() string {
	if b.SessionID != "" {
		return b.SessionID
	}
	return b.ThreadID
}

func (s *Server) chat(c *gin.Context) {
	var body chatBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if strings.TrimSpace(body.Message) == "" {
		s.fail(c, badRequest("message is required"))
		return
	}
	ver, err := s.chatGraph()
	if err != nil {
		s.fail(c, err)
		return
	}
	input := map[string]any{}
	msgField := messagesField(ver)
	if msgField == "" {
		s.fail(c, badRequest("chat graph %q has no messages field", ver.Name))
		return
	}
	input[msgField] = []any{map[string]any{"role": "user", "content": body.Message}}
	if body.UserID != "" {
		if _, ok := ver.Graph.Fields["user_id"]; ok {
			input["user_id"] = body.UserID
		}
	}
	s.chatRun(c, ver, body.session(), &runBody{Input: input})
}

func messagesField(ver *graphs.Version) string {
	for _, name := range append([]string{"messages"}, ver.Graph.FieldOrder...) {
		if f, ok := ver.Graph.Fields[name]; ok && f.Spec.Type.Kind == "messages" {
			return name
		}
	}
	return ""
}

// chatRun runs the chat graph on a session's thread and streams the run in
// the chat format.
func (s *Server) chatRun(c *gin.Context, ver *graphs.Version, session string, body *runBody) {
	if session == "" {
		session = newID()
	}
	if err := validID("session", session); err != nil {
		s.fail(c, err)
		return
	}
	body.AssistantID = ver.Name
	body.StreamMode = []any{modeChat}
	body.IfNotExists = "create"
	p, err := s.prepareOn(c, session, body)
	if err != nil {
		s.fail(c, err)
		return
	}
	a, err := s.submit(c, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("X-Session-Id", session)
	c.Header("Content-Location", runPath(p.rec))
	s.pipeChat(c, a)
}

// prepareOn is prepare for a thread named outside the path.
func (s *Server) prepareOn(c *gin.Context, thread string, body *runBody) (*prepared, error) {
	c.Params = append(c.Params, gin.Param{Key: "thread", Value: thread})
	return s.prepare(c, body)
}

// pipeChat streams a chat run: chat frames as they come; a failure before
// the graph ran becomes an error and a done event.
func (s *Server) pipeChat(c *gin.Context, a *runs.Active) {
	w := sse.Prepare(c.Writer)
	s.metrics.StreamOpened()
	defer s.metrics.StreamClosed()
	after, sawDone := 0, false
	for {
		entries, closed, wake := a.Buf.Since(after)
		for _, e := range entries {
			after = e.Seq
			switch {
			case e.Mode == modeChat:
				if strings.Contains(string(e.Frame.Data), `"type":"done"`) {
					sawDone = true
				}
				if w.Write(sse.Frame{Data: e.Frame.Data}) != nil {
					return
				}
			case e.Frame.Event == "error" && !sawDone:
				rec := a.Record()
				w.WriteJSON("", "", map[string]any{"type": "error", "payload": map[string]any{"message": rec.Error}})
				w.WriteJSON("", "", map[string]any{"type": "done", "payload": map[string]any{"session_id": rec.ThreadID, "run_id": rec.RunID, "status": "error"}})
				sawDone = true
			}
		}
		if closed {
			return
		}
		select {
		case <-wake:
		case <-c.Request.Context().Done():
			return
		}
	}
}

// ImageNode is implemented by node types that read an uploaded image, such
// as a vision node. It says where /chat/image puts what it receives: the state path of the image (a data URL), of its MIME
// type and of the requested action ("" when the node reads none), and the
// action the node always performs when it reads none from state.
type ImageNode interface {
	ImageFields() (image, mime, actionField, fixedAction string)
}

// imageActions are the actions /chat/image accepts when the graph's state
// does not enumerate its own.
var imageActions = []any{"analyze_only", "analyze_for_memory"}

// imageTarget is where an image request goes in a chat graph's state.
type imageTarget struct {
	node                string // the image-reading node, "" for the plain fields
	image, mime, action string // state paths; mime and action may be ""
	fixedAction         string
}

// imageTargetOf finds the first node of ver that reads images and takes its
// field names; a graph without one gets the plain fields image and action.
func imageTargetOf(ver *graphs.Version) (imageTarget, error) {
	for _, name := range ver.Graph.NodeOrder {
		n := ver.Graph.Nodes[name]
		if n == nil {
			continue
		}
		if in, ok := n.Impl.(ImageNode); ok {
			t := imageTarget{node: name}
			t.image, t.mime, t.action, t.fixedAction = in.ImageFields()
			return t, nil
		}
	}
	for _, f := range []string{"image", "action"} {
		if _, ok := ver.Graph.Fields[f]; !ok {
			return imageTarget{}, badRequest("chat graph %q reads no images: it has no vision node and no state field %q", ver.Name, f)
		}
	}
	return imageTarget{image: "image", action: "action"}, nil
}

// allowedActions lists the actions a target accepts: the action field's
// enum when its state field declares one.
func (t imageTarget) allowedActions(ver *graphs.Version) []any {
	if t.action != "" && !strings.Contains(t.action, ".") {
		if f, ok := ver.Graph.Fields[t.action]; ok && len(f.Spec.Enum) > 0 {
			return f.Spec.Enum
		}
	}
	return imageActions
}

// setPath writes v at a dotted state path of input, creating the objects
// on the way.
func setPath(input map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	m := input
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func (s *Server) chatImage(c *gin.Context) {
	ver, err := s.chatGraph()
	if err != nil {
		s.fail(c, err)
		return
	}
	target, err := imageTargetOf(ver)
	if err != nil {
		s.fail(c, err)
		return
	}
	action := c.PostForm("action")
	if action == "" {
		action = c.PostForm("image_action")
	}
	switch {
	case target.action == "" && target.fixedAction != "":
		if action != "" && action != target.fixedAction {
			s.fail(c, badRequest("action %q: the chat graph's image node %q always does %q", action, target.node, target.fixedAction))
			return
		}
	default:
		if action == "" {
			action = "analyze_only"
		}
		allowed := target.allowedActions(ver)
		ok := false
		names := make([]string, len(allowed))
		for i, a := range allowed {
			names[i] = fmt.Sprint(a)
			ok = ok || names[i] == action
		}
		if !ok {
			s.fail(c, badRequest("action %q is not one of %s", action, strings.Join(names, ", ")))
			return
		}
	}
	fh, err := c.FormFile("file")
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.fail(c, errorf(http.StatusRequestEntityTooLarge, "body_too_large", "image exceeds the limit of %d bytes", mbe.Limit))
			return
		}
		s.fail(c, badRequest("a multipart form with an image in field \"file\" is required: %v", err))
		return
	}
	f, err := fh.Open()
	if err != nil {
		s.fail(c, badRequest("read uploaded file: %v", err))
		return
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		s.fail(c, badRequest("read uploaded file: %v", err))
		return
	}
	if len(data) == 0 {
		s.fail(c, badRequest("uploaded file is empty"))
		return
	}
	mime := fh.Header.Get("Content-Type")
	if mime == "" || mime == "application/octet-stream" {
		mime = http.DetectContentType(data)
	}
	if !strings.HasPrefix(mime, "image/") {
		s.fail(c, errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "uploaded file is %s, not an image", mime))
		return
	}
	input := map[string]any{}
	setPath(input, target.image, "data:"+mime+";base64,"+base64.StdEncoding.EncodeToString(data))
	if target.mime != "" {
		setPath(input, target.mime, mime)
	}
	if target.action != "" {
		setPath(input, target.action, action)
	}
	if uid := c.PostForm("user_id"); uid != "" {
		if _, ok := ver.Graph.Fields["user_id"]; ok {
			input["user_id"] = uid
		}
	}
	session := c.PostForm("session_id")
	if session == "" {
		session = c.PostForm("thread_id")
	}
	s.chatRun(c, ver, session, &runBody{Input: input})
}

type respondBody struct {
	SessionID   string `json:"session_id"`
	ThreadID    string `json:"thread_id"`
	InterruptID string `json:"interrupt_id"`
	Response    any    `json:"response"`
	Values      any    `json:"values"`
	Result      any    `json:"result"`
	// request is the whole body, for the answer kind to read the fields
	// that name what it answers.
	request map[string]any
}

// UnmarshalJSON decodes the known fields and keeps the whole body.
func (b *respondBody) UnmarshalJSON(data []byte) error {
	type fields respondBody
	if err := json.Unmarshal(data, (*fields)(b)); err != nil {
		return err
	}
	return json.Unmarshal(data, &b.request)
}

func (b *respondBody) session() string {
	if b.SessionID != "" {
		return b.SessionID
	}
	return b.ThreadID
}

func (b *respondBody) answer() any {
	for _, v := range []any{b.Response, b.Values, b.Result} {
		if v != nil {
			return v
		}
	}
	return nil
}

// pendingInterrupt finds the interrupt of a session that an answer of kind
// is for, or a 409 saying why there is none. request is the answer's body
// (nil when a stored answer is used).
func (s *Server) pendingInterrupt(c *gin.Context, kind responseKind, session, interruptID string, request map[string]any) (*checkpoint.Interrupt, error) {
	if session == "" {
		return nil, badRequest("session_id is required")
	}
	if err := validID("session", session); err != nil {
		return nil, err
	}
	if _, busy := s.runs.Busy(session); busy {
		return nil, conflict("session %q has a run in progress", session)
	}
	snap, err := s.cp.Latest(c, session)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, notFound("session %q not found", session)
	}
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", session, err)
	}
	waiting := taskInterrupts(snap)
	if len(waiting) == 0 {
		name := strings.ToUpper(string(kind))
		article := "a"
		if strings.ContainsAny(name[:1], "AEIOU") {
			article = "an"
		}
		return nil, conflict("session %q is not waiting for %s %s response", session, article, name)
	}
	ak := s.answerKind(kind)
	var chat *compile.Graph
	if ver, err := s.chatGraph(); err == nil {
		chat = ver.Graph
	}
	for i := range waiting {
		in := &waiting[i]
		if interruptID != "" && in.ID != interruptID {
			continue
		}
		if ak != nil {
			ok, err := ak.Pending(in.Payload, request, snap.Values, chat)
			if err != nil {
				return nil, conflict("session %q: %v", session, err)
			}
			if !ok {
				continue
			}
		}
		return in, nil
	}
	switch {
	case interruptID != "":
		return nil, conflict("session %q has no pending interrupt %q", session, interruptID)
	case ak != nil && ak.Waiting != "":
		return nil, conflict("session %q is not waiting %s", session, ak.Waiting)
	}
	return nil, conflict("session %q is not waiting for a response", session)
}

// respond stores the answer to a session's pending interrupt.
func (s *Server) respond(kind responseKind) gin.HandlerFunc {
	return func(c *gin.Context) {
		var body respondBody
		if err := bindJSON(c, &body); err != nil {
			s.fail(c, err)
			return
		}
		session := body.session()
		c.Set(ctxThreadID, session)
		answer := body.answer()
		if answer == nil {
			s.fail(c, badRequest("response is required"))
			return
		}
		in, err := s.pendingInterrupt(c, kind, session, body.InterruptID, body.request)
		if err != nil {
			s.fail(c, err)
			return
		}
		value := map[string]any{"interrupt_id": in.ID, "node": in.Node, "response": answer, "kind": string(kind)}
		if err := s.st.Put(c, responseNS(kind), session, value, store.PutOptions{Index: []string{}}); err != nil {
			s.fail(c, fmt.Errorf("store %s response of session %q: %w", kind, session, err))
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "stored", "session_id": session, "interrupt_id": in.ID})
	}
}

// continueRun resumes a session with its stored answer, streamed as chat.
func (s *Server) continueRun(kind responseKind) gin.HandlerFunc {
	return func(c *gin.Context) {
		var body respondBody
		if err := bindJSON(c, &body); err != nil {
			s.fail(c, err)
			return
		}
		session := body.session()
		c.Set(ctxThreadID, session)
		ver, err := s.chatGraph()
		if err != nil {
			s.fail(c, err)
			return
		}
		in, err := s.pendingInterrupt(c, kind, session, "", nil)
		if err != nil {
			s.fail(c, err)
			return
		}
		it, err := s.st.Get(c, responseNS(kind), session)
		if errors.Is(err, store.ErrNotFound) {
			s.fail(c, conflict("session %q has no stored %s response; POST /%s/respond first", session, strings.ToUpper(string(kind)), kind))
			return
		}
		if err != nil {
			s.fail(c, fmt.Errorf("load %s response of session %q: %w", kind, session, err))
			return
		}
		stored := it.Value
		id, _ := stored["interrupt_id"].(string)
		if id != in.ID {
			if _, err := s.pendingInterrupt(c, kind, session, id, nil); err != nil {
				s.fail(c, conflict("the stored response answers interrupt %q, which is no longer pending", id))
				return
			}
		}
		if err := s.st.Delete(c, responseNS(kind), session); err != nil && !errors.Is(err, store.ErrNotFound) {
			s.fail(c, fmt.Errorf("clear %s response of session %q: %w", kind, session, err))
			return
		}
		s.chatRun(c, ver, session, &runBody{Command: &commandBody{Resume: stored["response"], InterruptID: id}})
	}
}
