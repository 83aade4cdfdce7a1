# nothing here
