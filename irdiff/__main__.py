from irdiff.cli import main

main()
