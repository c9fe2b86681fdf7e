"""The file tools: Read, Write, Edit, Glob, Grep and NotebookEdit (notebooks through `nbformat`)."""
