PREFIX = "#"
