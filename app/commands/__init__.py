"""The CLI's commands by subject (tenants, export/import, query); app/cli.py registers them on the root
app beside the process commands. Heavy imports stay inside the commands, so `palimpsest --help` is quick."""
