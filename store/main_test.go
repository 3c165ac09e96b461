package store_test

import (
	"testing"

	"github.com/hoard/hoard/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
