"""The fork server (a warm process that forks a teammate per launcher connection), its spare and early children,
and the lead's client of it."""
