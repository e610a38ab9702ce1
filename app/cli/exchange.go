package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
)

// importMemoryLimit is the import's soft heap limit.
const importMemoryLimit = 128 << 20

// errReported ends a command whose failure was already written to stderr.
var errReported = errors.New("reported")

func importCmd() *cobra.Command {
	var companyID string
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "import --company UUID [--dry-run] [--json] FILE|-",
		Short: "Import NDJSON lines {section,id,data} or {section,id,deleted:true}; all lines are validated first, then applied in one transaction",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			company, err := domain.ParseCompanyID(companyID)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			// A batch job: the garbage collector works harder rather than the
			// heap growing to twice what a large file's ids take (GOMEMLIMIT overrides).
			if os.Getenv("GOMEMLIMIT") == "" {
				debug.SetMemoryLimit(importMemoryLimit)
			}
			src, cleanup, err := seekable(args[0], cmd.InOrStdin())
			if err != nil {
				return err
			}
			defer cleanup()
			return withUseCase(cmd, func(ctx context.Context, x *usecase.Exchange) error {
				report, err := x.Import(ctx, company, src, dryRun)
				var bad *usecase.ImportErrors
				if errors.As(err, &bad) {
					for _, l := range bad.Lines {
						_, _ = fmt.Fprintln(cmd.ErrOrStderr(), l.String())
					}
					if bad.More > 0 {
						_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "… and %d more refused lines\n", bad.More)
					}
					_, _ = fmt.Fprintln(cmd.ErrOrStderr(), "nothing was imported")
					return errReported
				}
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), report)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "created %v, updated %v, deleted %v, unchanged %d%s\n",
					report.Created, report.Updated, report.Deleted, report.Unchanged, map[bool]string{true: " (dry run: nothing written)"}[dryRun])
				return err
			})
		},
	}
	cmd.Flags().StringVar(&companyID, "company", "", "company id (required)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate and count, write nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("company")
	return cmd
}

// seekable opens FILE, or spools standard input ("-") to a temporary file:
// the import reads its input twice, and a million lines are never held in memory.
func seekable(name string, stdin io.Reader) (*os.File, func(), error) {
	if name != "-" {
		f, err := os.Open(name) //nolint:gosec // the operator names the file to import
		if err != nil {
			return nil, nil, err
		}
		return f, func() { _ = f.Close() }, nil
	}
	f, err := os.CreateTemp("", "praxis-import-stdin-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { _ = f.Close(); _ = os.Remove(f.Name()) }
	if _, err := io.Copy(f, stdin); err != nil {
		cleanup()
		return nil, nil, err
	}
	// Read from the start, as a named file is: the import reads it twice.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, nil, err
	}
	return f, cleanup, nil
}

func exportCmd() *cobra.Command {
	var companyID, sections string
	cmd := &cobra.Command{
		Use:   "export --company UUID [--sections a,b] > FILE",
		Short: "Export the company's live objects as NDJSON in the import format",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			company, err := domain.ParseCompanyID(companyID)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			var list []string
			if sections != "" {
				list = strings.Split(sections, ",")
			}
			return withUseCase(cmd, func(ctx context.Context, x *usecase.Exchange) error {
				return x.Export(ctx, company, list, cmd.OutOrStdout())
			})
		},
	}
	cmd.Flags().StringVar(&companyID, "company", "", "company id (required)")
	cmd.Flags().StringVar(&sections, "sections", "", "comma-separated section slugs (default: every section)")
	_ = cmd.MarkFlagRequired("company")
	return cmd
}
