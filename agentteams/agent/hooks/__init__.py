"""Claude Code's hooks: as configured (`spec`), run (`runner`), and where each event fires with its payload
(`points`)."""
