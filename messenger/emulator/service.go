package emulator

import (
	"bytes"
	"fmt"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/mt"
)

// MTProto service messages are part of the protocol, not calls (docs,
// core.telegram.org/mtproto/service_messages): msgs_ack is taken without
// an answer, msgs_state_req is answered with msgs_state_info, and
// destroy_session with destroy_session_ok (the session is forgotten: no
// more updates are pushed to it). Anything else goes to the call handlers.

// serviceMessage handles a service message of type id in buf: handled
// reports one it knows; answer is what to send back (nil: nothing), forget
// a session id to drop.
func serviceMessage(id uint32, buf *bin.Buffer) (answer bin.Encoder, forget int64, handled bool, err error) {
	switch id {
	case mt.MsgsAckTypeID:
		var ack mt.MsgsAck
		if err := ack.Decode(buf); err != nil {
			return nil, 0, true, fmt.Errorf("msgs_ack: %w", err)
		}
		return nil, 0, true, nil
	case mt.MsgsStateReqTypeID:
		var req mt.MsgsStateReq
		if err := req.Decode(buf); err != nil {
			return nil, 0, true, fmt.Errorf("msgs_state_req: %w", err)
		}
		// 4: the message was received (the emulator answers every request
		// it receives, so it knows no other state to report).
		return &mt.MsgsStateInfo{Info: bytes.Repeat([]byte{4}, len(req.MsgIDs))}, 0, true, nil
	case mt.DestroySessionRequestTypeID:
		var req mt.DestroySessionRequest
		if err := req.Decode(buf); err != nil {
			return nil, 0, true, fmt.Errorf("destroy_session: %w", err)
		}
		return &mt.DestroySessionOk{SessionID: req.SessionID}, req.SessionID, true, nil
	}
	return nil, 0, false, nil
}
