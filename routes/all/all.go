// Package all registers every weir route; import it for its side effect:
//
//	import _ "github.com/weirhq/weir/routes/all"
package all

import (
	_ "github.com/weirhq/weir/routes/postgres" // postgres://, postgresql://
)
