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
					return refused(cmd.ErrOrStderr(), bad, "nothing was imported")
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

// refused writes an import's refused lines and what came of it; the command exits 1.
func refused(w io.Writer, bad *usecase.ImportErrors, outcome string) error {
	for _, l := range bad.Lines {
		_, _ = fmt.Fprintln(w, l.String())
	}
	if bad.More > 0 {
		_, _ = fmt.Fprintf(w, "… and %d more refused lines\n", bad.More)
	}
	_, _ = fmt.Fprintln(w, outcome)
	return errReported
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

func restoreCmd() *cobra.Command {
	var companyID, from, sections string
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "restore --from DATABASE_URL --company UUID [--sections a,b] [--dry-run] [--json]",
		Short: "Bring a company's objects back from a copy of the database at an earlier time, as new versions; conflicts are reported, not written",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			company, err := domain.ParseCompanyID(companyID)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			opts := usecase.RestoreOptions{DryRun: dryRun}
			if sections != "" {
				opts.Sections = strings.Split(sections, ",")
			}
			return withUseCase(cmd, func(ctx context.Context, r *usecase.Restore) error {
				report, err := r.Run(ctx, company, from, opts)
				var bad *usecase.ImportErrors
				switch {
				case errors.As(err, &bad):
					return refused(cmd.ErrOrStderr(), bad, "nothing was restored")
				case errors.Is(err, usecase.ErrNotInSource):
					return fmt.Errorf("--from: the source holds no company %s", company)
				case errors.Is(err, domain.ErrNotFound):
					return fmt.Errorf("--company: no company %s here (an erased one is not restored: import its export)", company)
				case errors.Is(err, domain.ErrNotPraxisDatabase), errors.Is(err, domain.ErrSchemaDiffers):
					return fmt.Errorf("--from: %w", err)
				case err != nil:
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), report)
				}
				w := cmd.OutOrStdout()
				verb := "restored"
				if dryRun {
					verb = "would restore (dry run: nothing written)"
				}
				_, _ = fmt.Fprintf(w, "%s: recreated %v, reverted %v; unchanged %d; conflicts %d\n",
					verb, report.Recreated, report.Reverted, report.Unchanged, len(report.Conflicts))
				for _, c := range report.Conflicts {
					_, _ = fmt.Fprintf(w, "conflict: %s %s: %s\n", c.Section, c.ID, c.Reason)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&companyID, "company", "", "company id (required)")
	cmd.Flags().StringVar(&from, "from", "", "the copy's database URL: postgres://… or sqlite:PATH (required)")
	cmd.Flags().StringVar(&sections, "sections", "", "comma-separated section slugs (default: every section)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "compare and check, write nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("company")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}
