package messengertest

import (
	"bytes"
	"io"
	"testing"

	"github.com/hoard/hoard/messenger"
)

func TestEmulatorStatePersists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed := DefaultSeed(t, dir)
	ctx := ctxT(t)

	env := StartIn(t, seed, dir)
	acc := env.Account(t, env.Config("account"))
	dest := destination(t, env, acc)
	data := generated(3000)
	id, err := acc.Upload(ctx, messenger.UploadRequest{Channel: dest, FileName: "kept.zip", Caption: "kept",
		Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := acc.JoinChannel(ctx, mustRef(t, "@openshelf")); err != nil {
		t.Fatal(err)
	}
	_ = acc.Close()
	_ = env.Emu.Close()

	// Same seed and state directory: the world continues.
	env2 := StartIn(t, seed, dir)
	acc2 := env2.Account(t, env2.Config("account")) // auth keys are not persisted: sign in again
	dest2 := destination(t, env2, acc2)
	msgs, err := acc2.Messages(ctx, dest2, []int{id})
	if err != nil || len(msgs) != 1 || msgs[0].Text != "kept" || msgs[0].Document.FileName != "kept.zip" {
		t.Fatalf("after restart = %+v, %v", msgs, err)
	}
	var back MemFile
	if err := acc2.Download(ctx, messenger.DownloadRequest{Channel: dest2, MessageID: id, Document: *msgs[0].Document}, &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), data) {
		t.Fatal("uploaded bytes lost")
	}
	shelf, status, err := acc2.JoinChannel(ctx, mustRef(t, "@openshelf"))
	if err != nil || status != messenger.AlreadyMember || !shelf.Member {
		t.Fatalf("membership lost: %s %v", status, err)
	}
	// New ids continue after the saved ones.
	id2, err := acc2.Upload(ctx, messenger.UploadRequest{Channel: dest2, FileName: "next.zip",
		Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))})
	if err != nil || id2 != id+1 {
		t.Fatalf("next post id = %d, %v; want %d", id2, err, id+1)
	}
}
