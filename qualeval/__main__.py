from qualeval.cli import main

main()
