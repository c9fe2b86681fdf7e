"""The teammate's runtime and what only a teammate does: its next turn, its watch on the lead, a plan's verdict.
May import team's top; never team/lead."""
