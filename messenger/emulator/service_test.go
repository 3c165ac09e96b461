package emulator

import (
	"testing"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/mt"
	"github.com/gotd/td/tg"
)

func TestServiceMessagesAreNoCalls(t *testing.T) {
	encode := func(o bin.Encoder) *bin.Buffer {
		var b bin.Buffer
		if err := o.Encode(&b); err != nil {
			t.Fatal(err)
		}
		return &b
	}
	type result struct {
		handled bool
		answer  string
		forget  int64
	}
	for _, tt := range []struct {
		name string
		msg  interface {
			bin.Encoder
			TypeID() uint32
		}
		want result
	}{
		{"an acknowledgement needs no answer", &mt.MsgsAck{MsgIDs: []int64{1, 2}}, result{handled: true}},
		{"a state request is told every message arrived", &mt.MsgsStateReq{MsgIDs: []int64{7, 8, 9}}, result{handled: true, answer: "\x04\x04\x04"}},
		{"a destroyed session is forgotten", &mt.DestroySessionRequest{SessionID: 42}, result{handled: true, answer: "ok 42", forget: 42}},
		{"a call is left to the handlers", &tg.HelpGetConfigRequest{}, result{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			answer, forget, handled, err := serviceMessage(tt.msg.TypeID(), encode(tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			got := result{handled: handled, forget: forget}
			switch a := answer.(type) {
			case *mt.MsgsStateInfo:
				got.answer = string(a.Info)
			case *mt.DestroySessionOk:
				got.answer = "ok 42"
				if a.SessionID != 42 {
					got.answer = "ok other"
				}
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
