package gosdk

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolctx "github.com/toolctx/toolctx/go"
)

// Progress sends a tool call's progress at the platform's relay rate: the
// core's coalescer says what is sent now, held until a time (a timer sends
// it then), or dropped. Call Done when the tool returns: the last held
// report is sent.
type Progress struct {
	mu    sync.Mutex
	ctx   context.Context
	req   *mcp.CallToolRequest
	token any
	c     *toolctx.Coalescer
	timer *time.Timer
}

// NewProgress is the progress reporter of req (nothing is sent when the
// call has no progressToken).
func NewProgress(ctx context.Context, req *mcp.CallToolRequest) (*Progress, error) {
	c, err := toolctx.NewCoalescer(0)
	if err != nil {
		return nil, err
	}
	p := &Progress{ctx: ctx, req: req, c: c}
	if req != nil && req.Params != nil {
		p.token = req.Params.GetProgressToken()
	}
	return p, nil
}

func nowMs() int64 { return time.Now().UnixMilli() }

// Report reports done of total (total 0: none) with an optional message.
func (p *Progress) Report(done, total float64, message string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token == nil {
		return nil
	}
	t := math.NaN()
	if total > 0 {
		t = total
	}
	var msg *string
	if message != "" {
		msg = &message
	}
	s, err := p.c.Report(nowMs(), done, t, msg)
	if err != nil {
		return err
	}
	return p.apply(s)
}

// apply sends or arms what the core answered (p.mu held).
func (p *Progress) apply(s toolctx.Step) error {
	if s.Send != nil {
		if p.timer != nil {
			p.timer.Stop()
			p.timer = nil
		}
		var params mcp.ProgressNotificationParams
		if err := json.Unmarshal(s.Send, &params); err != nil {
			return err
		}
		params.ProgressToken = p.token
		return p.req.Session.NotifyProgress(p.ctx, &params)
	}
	if s.Arm {
		if p.timer != nil {
			p.timer.Stop()
		}
		p.timer = time.AfterFunc(time.Duration(max(0, s.At-nowMs()))*time.Millisecond, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.timer = nil
			if next, err := p.c.Tick(nowMs()); err == nil {
				_ = p.apply(next)
			}
		})
	}
	return nil
}

// Done sends the held report, if any, and ends the call's progress.
func (p *Progress) Done() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.c.Free()
	defer p.c.Close()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.token == nil {
		return nil
	}
	s, err := p.c.Flush(nowMs())
	if err != nil || s.Send == nil {
		return err
	}
	return p.apply(s)
}
