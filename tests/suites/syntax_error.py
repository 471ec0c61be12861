# A suite file with a syntax error: irdiff must report it in one line.
def broken(:
    pass
