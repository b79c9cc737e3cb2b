// The storyboard parser's tests go here.
