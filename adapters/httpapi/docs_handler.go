package httpapi

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
)

// docsPath serves a page that renders the OpenAPI document: Swagger UI 5,
// its assets embedded in the binary, so it works offline and fetches nothing
// from a CDN.
const docsPath = "/docs"

// Docs is the documentation page.
type Docs struct{ handler fiber.Handler }

// NewDocs builds the page for the served document.
func NewDocs() *Docs {
	h := v5emb.NewWithConfig(swgui.Config{Title: "praxis API", SwaggerJSON: openAPIPath, BasePath: docsPath + "/", HideCurl: false})
	return &Docs{handler: adaptor.HTTPHandler(h("praxis API", openAPIPath, docsPath+"/"))}
}

func (d *Docs) Register(app fiber.Router) {
	app.Get(docsPath, d.handler)
	app.Get(docsPath+"/*", d.handler)
}
